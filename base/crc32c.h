// CRC-32C (Castagnoli), the checksum TFRecord files carry: "123456789" gives 0xE3069283.
#ifndef TRAINER_CRC32C_H
#define TRAINER_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c(const void *data, size_t size);
// TFRecord stores the CRC masked, so that a CRC of bytes that themselves hold CRCs does not
// degenerate: rotate right by 15 and add a constant.
uint32_t crc32c_masked(const void *data, size_t size);

#endif
