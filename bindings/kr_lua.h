/* kr_lua.h: what the binding files share: the state's context, tensor userdata, argument
 * checks and error conventions. Bindings layer: the only code that sees lua_State.
 * Misuse raises a Lua error; an expected failure returns nil, message. */
#ifndef KR_LUA_H
#define KR_LUA_H

#include <lua.h>
#include <lauxlib.h>
#include "kr_context.h"
#include "kr_tensor.h"

#define KR_TENSOR_MT "kreach.Tensor"
#define KR_PROGRAM_MT "kreach.Program"
#define KR_KERNEL_MT "kreach.Kernel"
#define KR_LAUNCH_MT "kreach.Launch"
#define KR_EVENT_MT "kreach.Event"

/* The context of this Lua state, created on first use (without touching the GPU). The state
 * holds one reference, dropped when the state closes. */
kr_context *kr_lua_ctx(lua_State *L);

/* Raises the context's last error. A missing device reads "no CUDA device: <why>"; main.c
 * turns an uncaught error after such a failure into exit status 77. */
int kr_lua_raise(lua_State *L, kr_context *ctx, kr_status s);
/* Pushes nil and the context's last error message; returns 2 (for `return kr_lua_fail(...)`). */
int kr_lua_fail(lua_State *L, kr_context *ctx);
/* Raises "no CUDA device: ..." unless the device opens. */
void kr_lua_require_device(lua_State *L);

/* Tensor userdata. kr_lua_newtensor pushes an empty (released) tensor userdata and returns
 * its slot, to be filled by an allocation or a view; kr_lua_checktensor raises for a non-tensor
 * or a freed one; kr_lua_totensor returns NULL for a non-tensor. */
kr_tensor *kr_lua_newtensor(lua_State *L);
kr_tensor *kr_lua_checktensor(lua_State *L, int idx);
kr_tensor *kr_lua_totensor(lua_State *L, int idx);

/* A dtype name at `idx` (or the default when absent and def >= 0). */
kr_dtype kr_lua_checkdtype(lua_State *L, int idx, int def);
/* A shape: a table of sizes at `idx`; returns the number of dimensions. */
int kr_lua_checkshape(lua_State *L, int idx, int64_t *shape);
/* Pushes a shape as a table of integers. */
void kr_lua_pushshape(lua_State *L, int ndim, const int64_t *shape);

/* Options tables: an integer, number, string or boolean field, or the default when absent;
 * a field of the wrong type raises "bad option 'name' (integer expected, got string)". */
lua_Integer kr_lua_optint_field(lua_State *L, int idx, const char *name, lua_Integer def);
lua_Number kr_lua_optnum_field(lua_State *L, int idx, const char *name, lua_Number def);
const char *kr_lua_optstr_field(lua_State *L, int idx, const char *name, const char *def);
int kr_lua_optbool_field(lua_State *L, int idx, const char *name, int def);
/* A launch's grid or block at `idx`: a positive integer, or a list of 1 to 3 of them (missing
 * sizes are 1), each at most 2^32 - 1, into out[0..2]; else raises "launch 'name' ...". */
void kr_lua_checkdim3(lua_State *L, int idx, const char *name, unsigned out[3]);
/* Raises if the options table at `idx` has a key not in the NULL-terminated `known` list, so
 * a misspelt option is an error instead of being ignored. */
void kr_lua_check_options(lua_State *L, int idx, const char *what, const char *const *known);

/* Registers the metatable `name` of a userdata class, once: `methods` (NULL: none) as __index,
 * `free` as __gc and __close, `tostring` (NULL: none) as __tostring, and __metatable false so
 * that scripts cannot reach it. Leaves the stack as it was. */
void kr_lua_newclass(lua_State *L, const char *name, const luaL_Reg *methods, lua_CFunction free,
                     lua_CFunction tostring);

/* Module openers, registered in package.preload by kr_lua_openlibs. */
int luaopen_kreach_core(lua_State *L);
int luaopen_kreach_tensor(lua_State *L);
int luaopen_kreach_nvrtc(lua_State *L);
int luaopen_kreach_cublas(lua_State *L);
int luaopen_kreach_cudnn(lua_State *L);
int luaopen_kreach_event(lua_State *L);
int luaopen_kreach_proc(lua_State *L);
int luaopen_kreach_sqlite(lua_State *L);
int luaopen_kreach_timing(lua_State *L);
int luaopen_kreach_util(lua_State *L);
int luaopen_kreach_fs(lua_State *L);
int luaopen_kreach_seal(lua_State *L);
int luaopen_kreach_http(lua_State *L);
int luaopen_kreach_host(lua_State *L);
void kr_lua_openlibs(lua_State *L);
/* Counts the Lua heap's bytes from now on (util.heap_used), with an optional cap (util.heap_limit). */
void kr_lua_count_heap(lua_State *L);

#endif
