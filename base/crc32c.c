#include "base/crc32c.h"

// The reflected Castagnoli polynomial. Bit by bit: event records are a few dozen bytes,
// written a few times a second at most, so a 1 KiB table would buy nothing measurable.
static const uint32_t CASTAGNOLI_REFLECTED = 0x82F63B78u;
static const uint32_t TFRECORD_MASK_DELTA = 0xA282EAD8u;

uint32_t crc32c(const void *data, size_t size) {
    const uint8_t *bytes = data;
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; i++) {
        crc ^= bytes[i];
        for (int bit = 0; bit < 8; bit++)
            crc = (crc >> 1) ^ (CASTAGNOLI_REFLECTED & (0u - (crc & 1u)));
    }
    return ~crc;
}

uint32_t crc32c_masked(const void *data, size_t size) {
    uint32_t crc = crc32c(data, size);
    return ((crc >> 15) | (crc << 17)) + TFRECORD_MASK_DELTA;
}
