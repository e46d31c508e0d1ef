/* kr_nvml.h: clocks and throttle reasons of the context's GPU, read through NVML.
 * Runtime layer (no Lua). NVML ships with the driver (libnvidia-ml.so.1), not the toolkit, so
 * it is loaded at run time: a machine without it reports why, and nothing else changes. */
#ifndef KR_NVML_H
#define KR_NVML_H

#include "kr_context.h"

/* NVML's clock-event ("throttle") reason bits, as nvml.h defines them. */
enum {
    KR_CLOCKS_GPU_IDLE = 0x1,
    KR_CLOCKS_APP_SETTING = 0x2,
    KR_CLOCKS_SW_POWER_CAP = 0x4,
    KR_CLOCKS_HW_SLOWDOWN = 0x8,
    KR_CLOCKS_SYNC_BOOST = 0x10,
    KR_CLOCKS_SW_THERMAL = 0x20,
    KR_CLOCKS_HW_THERMAL = 0x40,
    KR_CLOCKS_HW_POWER_BRAKE = 0x80,
    KR_CLOCKS_DISPLAY_SETTING = 0x100
};
/* The reasons that slow a measurement down (power and thermal caps, hardware slowdowns). */
#define KR_CLOCKS_THROTTLING (KR_CLOCKS_SW_POWER_CAP | KR_CLOCKS_HW_SLOWDOWN | \
    KR_CLOCKS_SW_THERMAL | KR_CLOCKS_HW_THERMAL | KR_CLOCKS_HW_POWER_BRAKE)

typedef struct {
    unsigned sm_mhz, mem_mhz;          /* current clocks */
    unsigned sm_max_mhz;               /* the SM's maximum (boost) clock */
    unsigned long long reasons;        /* KR_CLOCKS_* bits active now */
    unsigned temperature_c;            /* 0 when it cannot be read */
    unsigned power_mw;                 /* 0 when it cannot be read */
} kr_clocks;

/* Reads the clocks of the context's device (opening NVML on the first call and matching the
 * device by UUID). KR_ERR_NOTFOUND when NVML cannot be loaded or does not know the device,
 * with the reason in the context; the attempt is not repeated after such a failure. */
kr_status kr_nvml_clocks(kr_context *ctx, kr_clocks *out);

/* "sw_power_cap,hw_thermal" for a set of reason bits ("none" for 0), into buf. */
const char *kr_nvml_reason_names(unsigned long long reasons, char *buf, size_t n);

#endif
