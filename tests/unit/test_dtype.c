// dtype sizes and names, the f16/bf16 storage conversions against known bit patterns,
// and shape parsing.
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "base/dtype.h"
#include "base/shape.h"

static void dtype_names_and_sizes(void) {
    DType d;
    CHECK_INT_EQ(dtype_size(DTYPE_F32), 4);
    CHECK_INT_EQ(dtype_size(DTYPE_BF16), 2);
    CHECK_INT_EQ(dtype_size(DTYPE_U8), 1);
    CHECK(dtype_parse("bf16", &d) == 0 && d == DTYPE_BF16);
    CHECK(dtype_parse("float", &d) != 0);
    CHECK(strcmp(dtype_name(DTYPE_I32), "i32") == 0);
}

static void f16_conversions_match_ieee(void) {
    CHECK_INT_EQ(f32_to_f16(1.0f), 0x3c00);
    CHECK_INT_EQ(f32_to_f16(-2.0f), 0xc000);
    CHECK_INT_EQ(f32_to_f16(65504.0f), 0x7bff);
    CHECK_INT_EQ(f32_to_f16(65520.0f), 0x7c00);          // rounds to infinity
    CHECK_INT_EQ(f32_to_f16(5.9604645e-8f), 0x0001);    // smallest subnormal
    CHECK_INT_EQ(f32_to_f16(1.0f + 1.0f / 2048.0f), 0x3c00);  // tie rounds to even
    CHECK_INT_EQ(f32_to_f16(1.0f + 3.0f / 2048.0f), 0x3c02);  // tie rounds to even (up)
    CHECK(isnan(f16_to_f32(f32_to_f16(NAN))));
    CHECK_NEAR(f16_to_f32(0x3555), 0.333251953125, 0);
    CHECK_NEAR(f16_to_f32(0x0001), 5.9604645e-8, 1e-15);
    CHECK(isinf(f16_to_f32(0x7c00)));
    // Every finite half survives a round trip through f32.
    int mismatches = 0;
    for (uint32_t bits = 0; bits < 0x10000; bits++) {
        if ((bits & 0x7c00u) == 0x7c00u) continue;
        if (f32_to_f16(f16_to_f32((uint16_t)bits)) != bits) mismatches++;
    }
    CHECK_INT_EQ(mismatches, 0);
}

static void bf16_conversions_round_to_nearest_even(void) {
    CHECK_INT_EQ(f32_to_bf16(1.0f), 0x3f80);
    CHECK_INT_EQ(f32_to_bf16(-1.5f), 0xbfc0);
    CHECK_INT_EQ(f32_to_bf16(1.00390625f), 0x3f80);  // exactly halfway: to even
    CHECK_INT_EQ(f32_to_bf16(1.01171875f), 0x3f82);  // halfway: to even (up)
    CHECK_NEAR(bf16_to_f32(0x4049), 3.140625, 0);
    CHECK(isnan(bf16_to_f32(f32_to_bf16(NAN))));
}

static void shapes_parse_and_format(void) {
    Shape s;
    char why[128], text[64];
    CHECK(shape_parse("1x28x28", &s, why, sizeof why) == 0);
    CHECK_INT_EQ(s.rank, 3);
    CHECK_INT_EQ(shape_numel(&s), 784);
    CHECK(strcmp(shape_format(&s, text, sizeof text), "1x28x28") == 0);
    CHECK(shape_parse("784", &s, why, sizeof why) == 0 && s.rank == 1);
    CHECK(shape_parse("", &s, why, sizeof why) != 0);
    CHECK(shape_parse("28xx28", &s, why, sizeof why) != 0);
    CHECK(shape_parse("0x28", &s, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "between 1 and");
    CHECK(shape_parse("1x2x3x4x5", &s, why, sizeof why) != 0);
    CHECK_CONTAINS(why, "more than 4 dimensions");
    CHECK(shape_parse("28x", &s, why, sizeof why) != 0);
    CHECK(shape_parse("65536x65536", &s, why, sizeof why) != 0);
}

int main(void) {
    dtype_names_and_sizes();
    f16_conversions_match_ieee();
    bf16_conversions_round_to_nearest_even();
    shapes_parse_and_format();
    return test_exit_code("test_dtype");
}
