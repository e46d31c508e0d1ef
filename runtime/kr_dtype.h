/* kr_dtype.h: element types of tensors, and exact host conversions for the 16-bit floats.
 * Runtime layer (no Lua). Pure host code, unit-tested without a GPU. */
#ifndef KR_DTYPE_H
#define KR_DTYPE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    KR_F64 = 0, KR_F32, KR_F16, KR_BF16, KR_I64, KR_I32, KR_I16, KR_I8, KR_U8, KR_BOOL,
    KR_NDTYPES
} kr_dtype;

size_t kr_dtype_size(kr_dtype d);
/* "f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "bool". */
const char *kr_dtype_name(kr_dtype d);
/* Accepts the names above and the PyTorch spellings ("float32", "bfloat16", "int64", ...).
 * Returns 0, or -1 for an unknown name. */
int kr_dtype_parse(const char *name, kr_dtype *out);
int kr_dtype_is_float(kr_dtype d);
/* The CUDA C spelling of the element type: "float", "__nv_bfloat16", "long long", ... */
const char *kr_dtype_ctype(kr_dtype d);

/* The range of an integer dtype (bool: 0 to 1). Returns 0, or -1 for a floating dtype. */
int kr_dtype_int_range(kr_dtype d, int64_t *min, int64_t *max);

/* IEEE binary16 and bfloat16 from double, rounding to nearest, ties to even, in one step (no
 * double rounding through float). Overflow gives infinity; NaN stays NaN (quiet). */
uint16_t kr_f64_to_f16(double x);
uint16_t kr_f64_to_bf16(double x);
double kr_f16_to_f64(uint16_t h);
double kr_bf16_to_f64(uint16_t h);

/* Reads element `i` of a host buffer of dtype `d` as a double (i64 values beyond 2^53 lose
 * precision: callers that need exact integers use kr_host_get_i64). */
double kr_host_get(const void *buf, kr_dtype d, size_t i);
int64_t kr_host_get_i64(const void *buf, kr_dtype d, size_t i);
/* Writes a double into element `i`, converting to `d` (floats round to nearest even; integer
 * types take the value, which the caller has range-checked; bool is x != 0). */
void kr_host_set(void *buf, kr_dtype d, size_t i, double x);
void kr_host_set_i64(void *buf, kr_dtype d, size_t i, int64_t x);

/* The bit pattern that `poison` writes: a NaN with a payload that arithmetic never produces for
 * floats, and the byte 0xA5 repeated for integers and bool (a bool that is neither 0 nor 1).
 * Written into `out`, which must hold kr_dtype_size(d) bytes. */
void kr_dtype_poison_bits(kr_dtype d, void *out);

#endif
