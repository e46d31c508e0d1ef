/* kr_nvml.c: NVML, loaded with dlopen, for the clocks and throttle reasons around a timing.
 * Runtime layer (no Lua). Only the handful of entry points used here are declared; their
 * signatures are NVML's stable C ABI (nvml.h is not part of the CUDA toolkit image we build
 * with). The library handle and the device handle live with the context (KR_EXT_NVML). */
#define _GNU_SOURCE
#include "kr_nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t; /* 0 is NVML_SUCCESS */
typedef struct nvmlDevice_st *nvmlDevice_t;

enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

typedef struct {
    void *lib;
    int failed;               /* loading or matching failed once: say so, do not retry */
    char why[256];
    nvmlDevice_t dev;
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*max_clock_info)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
} nvml_state;

static void nvml_free(void *p) {
    nvml_state *n = p;
    if (n->lib) {
        if (n->shutdown && !n->failed) n->shutdown();
        dlclose(n->lib);
    }
    free(n);
}

static const char *errstr(nvml_state *n, nvmlReturn_t r) {
    static char buf[32];
    if (n->error_string) return n->error_string(r);
    snprintf(buf, sizeof buf, "NVML error %d", r);
    return buf;
}

static int open_nvml(kr_context *ctx, nvml_state *n) {
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib) {
        const char *e = dlerror();
        snprintf(n->why, sizeof n->why, "NVML cannot be loaded: %s", e ? e : "libnvidia-ml.so.1 not found");
        return -1;
    }
    nvmlReturn_t (*init)(void) = (nvmlReturn_t(*)(void))dlsym(n->lib, "nvmlInit_v2");
    nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *) =
        (nvmlReturn_t(*)(const char *, nvmlDevice_t *))dlsym(n->lib, "nvmlDeviceGetHandleByUUID");
    n->shutdown = (nvmlReturn_t(*)(void))dlsym(n->lib, "nvmlShutdown");
    n->error_string = (const char *(*)(nvmlReturn_t))dlsym(n->lib, "nvmlErrorString");
    n->clock_info = (nvmlReturn_t(*)(nvmlDevice_t, int, unsigned *))dlsym(n->lib, "nvmlDeviceGetClockInfo");
    n->max_clock_info = (nvmlReturn_t(*)(nvmlDevice_t, int, unsigned *))dlsym(n->lib, "nvmlDeviceGetMaxClockInfo");
    /* renamed in newer drivers; the old name is still exported, for older ones */
    n->reasons = (nvmlReturn_t(*)(nvmlDevice_t, unsigned long long *))dlsym(n->lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!n->reasons)
        n->reasons = (nvmlReturn_t(*)(nvmlDevice_t, unsigned long long *))dlsym(n->lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    n->temperature = (nvmlReturn_t(*)(nvmlDevice_t, int, unsigned *))dlsym(n->lib, "nvmlDeviceGetTemperature");
    n->power = (nvmlReturn_t(*)(nvmlDevice_t, unsigned *))dlsym(n->lib, "nvmlDeviceGetPowerUsage");
    if (!init || !by_uuid || !n->clock_info || !n->reasons) {
        snprintf(n->why, sizeof n->why, "NVML (libnvidia-ml.so.1) lacks the entry points kreach uses");
        return -1;
    }
    nvmlReturn_t r = init();
    if (r != 0) {
        snprintf(n->why, sizeof n->why, "nvmlInit failed: %s", errstr(n, r));
        return -1;
    }
    kr_device_info d;
    if (kr_context_device(ctx, &d) != KR_OK) {
        snprintf(n->why, sizeof n->why, "no CUDA device: %s", kr_context_errmsg(ctx));
        return -1;
    }
    char uuid[64];
    snprintf(uuid, sizeof uuid, "GPU-%s", d.uuid);
    r = by_uuid(uuid, &n->dev);
    if (r != 0) {
        snprintf(n->why, sizeof n->why, "NVML does not know the device %s: %s", uuid, errstr(n, r));
        return -1;
    }
    return 0;
}

kr_status kr_nvml_clocks(kr_context *ctx, kr_clocks *out) {
    memset(out, 0, sizeof *out);
    if (kr_context_is_host(ctx)) return kr_context_not_on_host(ctx, "NVML");
    nvml_state *n = kr_context_ext(ctx, KR_EXT_NVML);
    if (!n) {
        n = calloc(1, sizeof *n);
        if (!n) return KR_ERROR(ctx, KR_ERR_NOMEM, "out of host memory");
        kr_context_set_ext(ctx, KR_EXT_NVML, n, nvml_free);
        if (open_nvml(ctx, n) != 0) n->failed = 1;
    }
    if (n->failed) return KR_ERROR(ctx, KR_ERR_NOTFOUND, "%s", n->why);
    nvmlReturn_t r = n->clock_info(n->dev, NVML_CLOCK_SM, &out->sm_mhz);
    if (r == 0) r = n->clock_info(n->dev, NVML_CLOCK_MEM, &out->mem_mhz);
    if (r == 0) r = n->reasons(n->dev, &out->reasons);
    if (r != 0) return KR_ERROR(ctx, KR_ERR_NOTFOUND, "NVML: %s", errstr(n, r));
    if (n->max_clock_info) n->max_clock_info(n->dev, NVML_CLOCK_SM, &out->sm_max_mhz);
    if (n->temperature) n->temperature(n->dev, NVML_TEMPERATURE_GPU, &out->temperature_c);
    if (n->power) n->power(n->dev, &out->power_mw);
    return KR_OK;
}

const char *kr_nvml_reason_names(unsigned long long reasons, char *buf, size_t len) {
    static const struct { unsigned long long bit; const char *name; } names[] = {
        {KR_CLOCKS_GPU_IDLE, "gpu_idle"},           {KR_CLOCKS_APP_SETTING, "applications_clocks"},
        {KR_CLOCKS_SW_POWER_CAP, "sw_power_cap"},   {KR_CLOCKS_HW_SLOWDOWN, "hw_slowdown"},
        {KR_CLOCKS_SYNC_BOOST, "sync_boost"},       {KR_CLOCKS_SW_THERMAL, "sw_thermal"},
        {KR_CLOCKS_HW_THERMAL, "hw_thermal"},       {KR_CLOCKS_HW_POWER_BRAKE, "hw_power_brake"},
        {KR_CLOCKS_DISPLAY_SETTING, "display_clocks"}};
    if (len == 0) return buf;
    buf[0] = '\0';
    size_t at = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(reasons & names[i].bit)) continue;
        int w = snprintf(buf + at, len - at, "%s%s", at ? "," : "", names[i].name);
        if (w < 0 || (size_t)w >= len - at) break;
        at += (size_t)w;
    }
    unsigned long long known = 0x1FF;
    if (reasons & ~known && at + 8 < len)
        snprintf(buf + at, len - at, "%sother", at ? "," : "");
    if (!buf[0]) snprintf(buf, len, "none");
    return buf;
}
