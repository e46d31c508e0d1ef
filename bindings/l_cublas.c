/* l_cublas.c: Lua binding of kr_cublas (module "kreach.core.cublas"): row-major GEMM.
 * Bindings layer. Every failure here is a programming error or a broken device, so it raises;
 * the checks and their messages live in the runtime. */
#include "kr_lua.h"
#include "kr_cublas.h"

/* gemm(c, a, b [, {trans_a=, trans_b=, alpha=, beta=, tf32=}]) -> c
 * c = alpha * op(a) @ op(b) + beta * c, queued on the harness stream. */
static int l_cublas_gemm(lua_State *L) {
    static const char *const known[] = {"trans_a", "trans_b", "alpha", "beta", "tf32", NULL};
    kr_tensor *c = kr_lua_checktensor(L, 1);
    kr_tensor *a = kr_lua_checktensor(L, 2);
    kr_tensor *b = kr_lua_checktensor(L, 3);
    kr_gemm_opts o = KR_GEMM_OPTS_DEFAULT;
    if (!lua_isnoneornil(L, 4)) {
        luaL_checktype(L, 4, LUA_TTABLE);
        kr_lua_check_options(L, 4, "gemm", known);
        o.trans_a = kr_lua_optbool_field(L, 4, "trans_a", o.trans_a);
        o.trans_b = kr_lua_optbool_field(L, 4, "trans_b", o.trans_b);
        o.alpha = kr_lua_optnum_field(L, 4, "alpha", o.alpha);
        o.beta = kr_lua_optnum_field(L, 4, "beta", o.beta);
        o.tf32 = kr_lua_optbool_field(L, 4, "tf32", o.tf32);
    }
    kr_context *ctx = kr_lua_ctx(L);
    kr_status s = kr_cublas_gemm(ctx, c, a, b, &o);
    if (s != KR_OK) return kr_lua_raise(L, ctx, s);
    lua_settop(L, 1);
    return 1;
}

int luaopen_kreach_cublas(lua_State *L) {
    static const luaL_Reg fns[] = {{"gemm", l_cublas_gemm}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
