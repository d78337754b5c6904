/*
 * fuzz_input.h — how the libFuzzer harnesses turn the fuzzer's bytes into API inputs.
 *
 * A reader walks the byte string; past its end every read gives 0, so any string (also the
 * empty one) decodes to some input. Numbers come from a palette that makes the interesting
 * values likely: small grid values (duplicates, coplanar and collinear points, exact contact),
 * the edges of the documented domains (0, negative zero, 1, denormals, huge) and the values
 * that must be refused (NaN, +-Inf, negative), plus raw IEEE doubles taken from the bytes.
 */
#ifndef PP_FUZZ_INPUT_H
#define PP_FUZZ_INPUT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct fuzz_reader {
    const uint8_t *data;
    size_t size, at;
} fuzz_reader;

static inline fuzz_reader fuzz_reader_make(const uint8_t *data, size_t size)
{
    fuzz_reader r = {data, size, 0};
    return r;
}

static inline uint8_t fuzz_u8(fuzz_reader *r)
{
    return r->at < r->size ? r->data[r->at++] : 0;
}

static inline uint16_t fuzz_u16(fuzz_reader *r)
{
    const uint16_t lo = fuzz_u8(r);
    return (uint16_t)(lo | (uint16_t)fuzz_u8(r) << 8);
}

static inline uint32_t fuzz_u32(fuzz_reader *r)
{
    const uint32_t lo = fuzz_u16(r);
    return lo | (uint32_t)fuzz_u16(r) << 16;
}

/* An integer in [lo, hi]. */
static inline int fuzz_int(fuzz_reader *r, int lo, int hi)
{
    return lo + (int)(fuzz_u8(r) % (unsigned)(hi - lo + 1));
}

static inline double fuzz_raw_double(fuzz_reader *r)
{
    uint64_t bits = fuzz_u32(r);
    bits |= (uint64_t)fuzz_u32(r) << 32;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* A double in [lo, hi] at 1/255 resolution (one byte): always finite and in range. */
static inline double fuzz_unit(fuzz_reader *r, double lo, double hi)
{
    return lo + (hi - lo) * (double)fuzz_u8(r) / 255.0;
}

/* n doubles in [lo, hi], read in order. (The order in which a call's arguments or an
 * initializer list's values are evaluated is unspecified in C: gcc and clang differ, and an
 * input would decode differently in a plain build than in the fuzzer.) */
static inline void fuzz_units(fuzz_reader *r, double lo, double hi, double *out, int n)
{
    for (int i = 0; i < n; ++i) out[i] = fuzz_unit(r, lo, hi);
}

/* Any double, from the palette (one byte, a raw double takes eight more). */
static inline double fuzz_any_double(fuzz_reader *r)
{
    const uint8_t b = fuzz_u8(r);
    if (b < 160) return (double)((int)(b % 9) - 4) * 0.25;   /* grid -1 .. 1 */
    switch (b % 16) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return -0.0;
    case 4: return 1e-310;      /* denormal */
    case 5: return -1e-310;
    case 6: return 1e300;
    case 7: return -1e300;
    case 8: return 1e-9;
    case 9: return 1e3;
    case 10: return -1e3;
    case 11: return 1.0 + 1e-15;
    case 12: return 64.0;
    case 13: return 3600.0;
    default: return fuzz_raw_double(r);
    }
}

/* A finite double near the documented domain: mostly in [lo, hi], sometimes just outside it
 * or a palette value (NaN included) when `wild` allows. */
static inline double fuzz_double(fuzz_reader *r, double lo, double hi, int wild)
{
    const uint8_t b = fuzz_u8(r);
    if (!wild || b < 224) return lo + (hi - lo) * (double)fuzz_u8(r) / 255.0;
    return fuzz_any_double(r);
}

#endif /* PP_FUZZ_INPUT_H */
