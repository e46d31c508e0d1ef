/* l_timing.c: Lua binding of kr_timing and kr_nvml (module "kreach.core.timing"): the L2
 * flush, CUDA-graph capture and replay, the gate, and the GPU's clocks.
 * Bindings layer. A graph and a gate are userdata; __gc, __close and :free() share one release. */
#define _POSIX_C_SOURCE 200809L
#include "kr_lua.h"
#include "kr_nvml.h"
#include "kr_timing.h"

#include <string.h>
#include <unistd.h>

#define KR_GRAPH_MT "kreach.Graph"
#define KR_GATE_MT "kreach.Gate"

typedef struct {
    kr_graph *g;
    size_t nodes;
} lgraph;

static int check(lua_State *L, kr_status s) {
    return s == KR_OK ? 0 : kr_lua_raise(L, kr_lua_ctx(L), s);
}

/* flush(factor=2) -> bytes written */
static int l_timing_flush(lua_State *L) {
    double factor = luaL_optnumber(L, 1, 2.0);
    size_t bytes = 0;
    check(L, kr_timing_flush(kr_lua_ctx(L), factor, &bytes));
    lua_pushinteger(L, (lua_Integer)bytes);
    return 1;
}

static int l_timing_persisting_l2(lua_State *L) {
    size_t bytes = 0;
    check(L, kr_timing_persisting_l2(kr_lua_ctx(L), &bytes));
    lua_pushinteger(L, (lua_Integer)bytes);
    return 1;
}

static int l_timing_graph_begin(lua_State *L) {
    check(L, kr_graph_begin(kr_lua_ctx(L)));
    return 0;
}

static int l_timing_graph_abort(lua_State *L) {
    kr_graph_abort(kr_lua_ctx(L));
    return 0;
}

/* graph_end() -> graph, or nil and the reason (a call that cannot be captured is a result) */
static int l_timing_graph_end(lua_State *L) {
    lgraph *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->g = NULL;
    u->nodes = 0;
    luaL_setmetatable(L, KR_GRAPH_MT);
    kr_context *ctx = kr_lua_ctx(L);
    if (kr_graph_end(ctx, &u->g, &u->nodes) != KR_OK) return kr_lua_fail(L, ctx);
    return 1;
}

static lgraph *checkgraph(lua_State *L, int idx) {
    lgraph *u = luaL_checkudata(L, idx, KR_GRAPH_MT);
    if (!u->g) luaL_argerror(L, idx, "graph has been freed");
    return u;
}

static int l_graph_launch(lua_State *L) {
    check(L, kr_graph_launch(kr_lua_ctx(L), checkgraph(L, 1)->g));
    return 0;
}

static int l_graph_nodes(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)checkgraph(L, 1)->nodes);
    return 1;
}

static int l_graph_free(lua_State *L) {
    lgraph *u = luaL_checkudata(L, 1, KR_GRAPH_MT);
    kr_graph_free(u->g);
    u->g = NULL;
    return 0;
}

/* gate() -> a gate (kr_gate): g:hold(timeout_ms), g:release(), g:timeouts(), g:free() */
typedef struct {
    kr_gate *g;
} lgate;

static int l_timing_gate(lua_State *L) {
    lgate *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->g = NULL;
    luaL_setmetatable(L, KR_GATE_MT);
    check(L, kr_gate_new(kr_lua_ctx(L), &u->g));
    return 1;
}

static lgate *checkgate(lua_State *L, int idx) {
    lgate *u = luaL_checkudata(L, idx, KR_GATE_MT);
    if (!u->g) luaL_argerror(L, idx, "gate has been freed");
    return u;
}

static int l_gate_hold(lua_State *L) {
    lgate *u = checkgate(L, 1);
    check(L, kr_gate_hold(kr_lua_ctx(L), u->g, luaL_optnumber(L, 2, 100.0)));
    return 0;
}

static int l_gate_release(lua_State *L) {
    kr_gate_release(checkgate(L, 1)->g);
    return 0;
}

static int l_gate_timeouts(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)kr_gate_timeouts(checkgate(L, 1)->g));
    return 1;
}

static int l_gate_free(lua_State *L) {
    lgate *u = luaL_checkudata(L, 1, KR_GATE_MT);
    kr_gate_free(u->g);
    u->g = NULL;
    return 0;
}

static void setnum(lua_State *L, const char *k, lua_Number v) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

static void setint(lua_State *L, const char *k, lua_Integer v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
}

/* clocks() -> {sm_mhz, mem_mhz, sm_max_mhz, reasons = "a,b", reason_bits, throttled,
 * temperature_c, power_w}, or nil and why NVML cannot tell */
static int l_timing_clocks(lua_State *L) {
    kr_context *ctx = kr_lua_ctx(L);
    kr_clocks c;
    if (kr_nvml_clocks(ctx, &c) != KR_OK) return kr_lua_fail(L, ctx);
    char names[256];
    lua_createtable(L, 0, 8);
    setint(L, "sm_mhz", c.sm_mhz);
    setint(L, "mem_mhz", c.mem_mhz);
    setint(L, "sm_max_mhz", c.sm_max_mhz);
    setint(L, "reason_bits", (lua_Integer)c.reasons);
    lua_pushstring(L, kr_nvml_reason_names(c.reasons, names, sizeof names));
    lua_setfield(L, -2, "reasons");
    lua_pushboolean(L, (c.reasons & KR_CLOCKS_THROTTLING) != 0);
    lua_setfield(L, -2, "throttled");
    if (c.temperature_c) setint(L, "temperature_c", c.temperature_c);
    if (c.power_mw) setnum(L, "power_w", c.power_mw / 1000.0);
    return 1;
}

/* reason_names(bits) -> "sw_power_cap,hw_thermal" */
static int l_timing_reason_names(lua_State *L) {
    char names[256];
    lua_pushstring(L, kr_nvml_reason_names((unsigned long long)luaL_checkinteger(L, 1), names,
                                           sizeof names));
    return 1;
}

int luaopen_kreach_timing(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"launch", l_graph_launch}, {"nodes", l_graph_nodes}, {"free", l_graph_free}, {NULL, NULL}};
    kr_lua_newclass(L, KR_GRAPH_MT, methods, l_graph_free, NULL);
    static const luaL_Reg gate_methods[] = {{"hold", l_gate_hold},
                                            {"release", l_gate_release},
                                            {"timeouts", l_gate_timeouts},
                                            {"free", l_gate_free},
                                            {NULL, NULL}};
    kr_lua_newclass(L, KR_GATE_MT, gate_methods, l_gate_free, NULL);
    static const luaL_Reg fns[] = {
        {"flush", l_timing_flush},           {"persisting_l2", l_timing_persisting_l2},
        {"graph_begin", l_timing_graph_begin}, {"graph_end", l_timing_graph_end},
        {"graph_abort", l_timing_graph_abort}, {"clocks", l_timing_clocks},
        {"reason_names", l_timing_reason_names}, {"gate", l_timing_gate}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
