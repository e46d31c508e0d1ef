/* l_nvrtc.c: Lua binding of kr_nvrtc (module "kreach.core.nvrtc"): build, programs, kernels,
 * launches. Bindings layer. Every launch argument is checked against the kernel's declared
 * parameter and converted to its type; nothing is passed by reinterpreting bits.
 * prog.<kernel>{grid=, block=, shared=}(args...) is the launch form;
 * prog.<kernel>{...}:check(args...) makes the same checks without a GPU (kreach lint). */
#include "kr_lua.h"
#include "kr_nvrtc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct { kr_program *p; } lprog;
typedef struct { int index; } lkernel;   /* uservalue 1: the program userdata */
typedef struct { int index; kr_dim3 grid, block; size_t shared; } llaunch; /* uv 1: program */

static lprog *checkprog(lua_State *L, int idx) {
    lprog *p = luaL_checkudata(L, idx, KR_PROGRAM_MT);
    if (!p->p) luaL_argerror(L, idx, "program has been freed");
    return p;
}

/* ---- build ---- */

static int strings_field(lua_State *L, int idx, const char *name, const char ***out) {
    *out = NULL;
    if (lua_getfield(L, idx, name) == LUA_TNIL) {
        lua_pop(L, 1);
        return 0;
    }
    if (!lua_istable(L, -1))
        luaL_error(L, "bad option '%s' (table of strings expected, got %s)", name,
                   luaL_typename(L, -1));
    int n = (int)luaL_len(L, -1);
    const char **v = lua_newuserdatauv(L, sizeof(char *) * (size_t)(n ? n : 1), 0);
    for (int i = 0; i < n; i++) {
        if (lua_geti(L, -2, i + 1) != LUA_TSTRING)
            luaL_error(L, "bad option '%s' (element %d is %s, not a string)", name, i + 1,
                       luaL_typename(L, -1));
        v[i] = lua_tostring(L, -1); /* anchored by the options table */
        lua_pop(L, 1);
    }
    lua_remove(L, -2); /* keep the array userdata on the stack, drop the table copy */
    *out = v;
    return n;
}

/* build{source=, name=, options=, arch=, cache_dir=, no_cache=, instantiate=, confine=} ->
 * program | nil, err (err carries the compiler log). confine: NVRTC may reach only the
 * toolkit's headers and the -I directories (kr_nvrtc.h). */
static int l_nvrtc_build(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    static const char *const known[] = {"source", "name", "options", "arch", "cache_dir",
                                        "no_cache", "instantiate", "confine", NULL};
    kr_lua_check_options(L, 1, "nvrtc.build", known);
    kr_build_opts o;
    memset(&o, 0, sizeof o);
    o.source = kr_lua_optstr_field(L, 1, "source", NULL);
    if (!o.source) return luaL_error(L, "nvrtc.build: 'source' is required");
    o.name = kr_lua_optstr_field(L, 1, "name", NULL);
    o.arch = kr_lua_optstr_field(L, 1, "arch", NULL);
    o.cache_dir = kr_lua_optstr_field(L, 1, "cache_dir", NULL);
    o.no_cache = kr_lua_optbool_field(L, 1, "no_cache", 0);
    o.confine = kr_lua_optbool_field(L, 1, "confine", 0);
    const char **opts, **inst;
    o.n_options = strings_field(L, 1, "options", &opts);
    o.options = opts;
    o.n_instantiate = strings_field(L, 1, "instantiate", &inst);
    o.instantiate = inst;
    lprog *ud = lua_newuserdatauv(L, sizeof *ud, 1);
    ud->p = NULL;
    luaL_setmetatable(L, KR_PROGRAM_MT);
    kr_context *ctx = kr_lua_ctx(L);
    kr_status s = kr_nvrtc_build(ctx, &o, &ud->p);
    if (s == KR_ERR_COMPILE) return kr_lua_fail(L, ctx);
    if (s != KR_OK) return kr_lua_raise(L, ctx, s);
    lua_newtable(L); /* kernel objects, made on first access */
    lua_setiuservalue(L, -2, 1);
    return 1;
}

/* ---- kernels ---- */

static void push_kernel(lua_State *L, int progidx, int index) {
    progidx = lua_absindex(L, progidx);
    lua_getiuservalue(L, progidx, 1);
    if (lua_rawgeti(L, -1, index + 1) == LUA_TUSERDATA) {
        lua_remove(L, -2);
        return;
    }
    lua_pop(L, 1);
    lkernel *k = lua_newuserdatauv(L, sizeof *k, 1);
    k->index = index;
    luaL_setmetatable(L, KR_KERNEL_MT);
    lua_pushvalue(L, progidx);
    lua_setiuservalue(L, -2, 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, index + 1);
    lua_remove(L, -2);
}

static void push_names(lua_State *L, const kr_program *p) {
    lua_createtable(L, kr_program_n_kernels(p), 0);
    for (int i = 0; i < kr_program_n_kernels(p); i++) {
        lua_pushstring(L, kr_program_kernel_name(p, i));
        lua_rawseti(L, -2, i + 1);
    }
}

static int no_kernel(lua_State *L, const kr_program *p, const char *name) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; i < kr_program_n_kernels(p); i++) {
        if (i) luaL_addstring(&b, ", ");
        luaL_addstring(&b, kr_program_kernel_name(p, i));
    }
    if (!kr_program_n_kernels(p)) luaL_addstring(&b, "none");
    luaL_pushresult(&b);
    return luaL_error(L, "%s has no kernel '%s' (kernels: %s)", kr_program_name(p), name,
                      lua_tostring(L, -1));
}

static int l_prog_kernel(lua_State *L) {
    lprog *ud = checkprog(L, 1);
    const char *name = luaL_checkstring(L, 2);
    int i = kr_program_find(ud->p, name);
    if (i < 0) return no_kernel(L, ud->p, name);
    push_kernel(L, 1, i);
    return 1;
}

static int l_prog_free(lua_State *L) {
    lprog *ud = luaL_checkudata(L, 1, KR_PROGRAM_MT);
    kr_program_free(ud->p);
    ud->p = NULL;
    return 0;
}

static int l_prog_cubin(lua_State *L) {
    size_t n;
    const void *c = kr_program_cubin(checkprog(L, 1)->p, &n);
    lua_pushlstring(L, c, n);
    return 1;
}

/* Program fields come first; any other name is looked up as a kernel. */
static int l_prog_index(lua_State *L) {
    lprog *ud = luaL_checkudata(L, 1, KR_PROGRAM_MT);
    const char *k = luaL_checkstring(L, 2);
    if (!strcmp(k, "free")) { lua_pushcfunction(L, l_prog_free); return 1; }
    if (!strcmp(k, "kernel")) { lua_pushcfunction(L, l_prog_kernel); return 1; }
    if (!strcmp(k, "cubin")) { lua_pushcfunction(L, l_prog_cubin); return 1; }
    if (!ud->p) return luaL_error(L, "program has been freed");
    const kr_program *p = ud->p;
    if (!strcmp(k, "name")) lua_pushstring(L, kr_program_name(p));
    else if (!strcmp(k, "arch")) lua_pushstring(L, kr_program_arch(p));
    else if (!strcmp(k, "log")) lua_pushstring(L, kr_program_log(p));
    else if (!strcmp(k, "key")) lua_pushstring(L, kr_program_key(p));
    else if (!strcmp(k, "cache")) lua_pushstring(L, kr_cache_result_name(kr_program_cache_result(p)));
    else if (!strcmp(k, "cache_path")) lua_pushstring(L, kr_program_cache_path(p));
    else if (!strcmp(k, "cache_note")) lua_pushstring(L, kr_program_cache_note(p));
    else if (!strcmp(k, "compile_ms")) lua_pushnumber(L, kr_program_compile_ms(p));
    else if (!strcmp(k, "kernels")) push_names(L, p);
    else {
        int i = kr_program_find(p, k);
        if (i < 0) return no_kernel(L, p, k);
        push_kernel(L, 1, i);
    }
    return 1;
}

static int l_prog_tostring(lua_State *L) {
    lprog *ud = luaL_checkudata(L, 1, KR_PROGRAM_MT);
    if (!ud->p) lua_pushstring(L, "kreach.Program (freed)");
    else lua_pushfstring(L, "kreach.Program(%s, %s, %d kernels)", kr_program_name(ud->p),
                         kr_program_arch(ud->p), kr_program_n_kernels(ud->p));
    return 1;
}

/* The kernel's program, raising if it was freed. Leaves the program userdata on the stack. */
static kr_program *kernel_prog(lua_State *L, int idx, int *index, const char *mt) {
    void *u = luaL_checkudata(L, idx, mt);
    *index = *(int *)u; /* lkernel and llaunch both start with the index */
    lua_getiuservalue(L, idx, 1);
    lprog *p = lua_touserdata(L, -1);
    if (!p || !p->p) luaL_error(L, "the kernel's program has been freed");
    return p->p;
}

static void push_param(lua_State *L, const kr_param *pa) {
    lua_createtable(L, 0, 6);
    lua_pushstring(L, pa->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, pa->type_text);
    lua_setfield(L, -2, "type");
    lua_pushstring(L, kr_ptype_name(pa->type));
    lua_setfield(L, -2, "kind");
    if (pa->type == KR_PT_PTR) {
        lua_pushstring(L, kr_elem_name(pa->elem));
        lua_setfield(L, -2, "elem");
        lua_pushinteger(L, pa->vec);
        lua_setfield(L, -2, "vec");
        lua_pushboolean(L, pa->is_const);
        lua_setfield(L, -2, "const");
    }
}

static int l_kernel_index(lua_State *L) {
    int index;
    kr_program *p = kernel_prog(L, 1, &index, KR_KERNEL_MT);
    const char *k = luaL_checkstring(L, 2);
    const kr_kernel_sig *sig = kr_program_kernel_sig(p, index);
    if (!strcmp(k, "name")) {
        lua_pushstring(L, kr_program_kernel_name(p, index));
    } else if (!strcmp(k, "params")) {
        lua_createtable(L, sig->n_params > 0 ? sig->n_params : 0, 0);
        for (int i = 0; i < sig->n_params; i++) {
            push_param(L, &sig->params[i]);
            lua_rawseti(L, -2, i + 1);
        }
    } else if (!strcmp(k, "line")) {
        lua_pushinteger(L, sig->line);
    } else if (!strcmp(k, "attributes")) {
        kr_kernel_attrs a;
        kr_context *ctx = kr_lua_ctx(L);
        kr_status s = kr_program_kernel_attrs(ctx, p, index, &a);
        if (s != KR_OK) return kr_lua_raise(L, ctx, s);
        lua_createtable(L, 0, 6);
        lua_pushinteger(L, a.num_regs);
        lua_setfield(L, -2, "registers");
        lua_pushinteger(L, (lua_Integer)a.static_shared_bytes);
        lua_setfield(L, -2, "static_shared_bytes");
        lua_pushinteger(L, (lua_Integer)a.local_bytes);
        lua_setfield(L, -2, "local_bytes");
        lua_pushinteger(L, a.max_threads_per_block);
        lua_setfield(L, -2, "max_threads_per_block");
        lua_pushstring(L, a.mangled);
        lua_setfield(L, -2, "symbol");
    } else {
        return luaL_error(L, "kernel has no field '%s' (name, params, line, attributes)", k);
    }
    return 1;
}

static void dim_field(lua_State *L, int cfg, const char *name, kr_dim3 *d, int required) {
    if (lua_getfield(L, cfg, name) == LUA_TNIL) {
        if (required) luaL_error(L, "launch configuration needs '%s'", name);
        d->x = d->y = d->z = 1;
    } else {
        unsigned v[3];
        kr_lua_checkdim3(L, -1, name, v);
        d->x = v[0], d->y = v[1], d->z = v[2];
    }
    lua_pop(L, 1);
}

/* k{grid=, block=, shared=} -> a launch, callable with the kernel's arguments */
static int l_kernel_call(lua_State *L) {
    int index;
    kernel_prog(L, 1, &index, KR_KERNEL_MT);
    luaL_checktype(L, 2, LUA_TTABLE);
    static const char *const known[] = {"grid", "block", "shared", NULL};
    kr_lua_check_options(L, 2, "a launch", known);
    llaunch *l = lua_newuserdatauv(L, sizeof *l, 1);
    l->index = index;
    dim_field(L, 2, "grid", &l->grid, 1);
    dim_field(L, 2, "block", &l->block, 1);
    lua_Integer sh = kr_lua_optint_field(L, 2, "shared", 0);
    if (sh < 0) return luaL_error(L, "launch 'shared' must be >= 0 bytes");
    l->shared = (size_t)sh;
    luaL_setmetatable(L, KR_LAUNCH_MT);
    lua_getiuservalue(L, 1, 1);
    lua_setiuservalue(L, -2, 1);
    return 1;
}

/* ---- argument conversion ---- */

typedef union { int8_t i8; uint8_t u8; int16_t i16; uint16_t u16; int32_t i32; uint32_t u32;
                int64_t i64; uint64_t u64; float f32; double f64; void *ptr; } argval;

static int elem_matches(kr_elem e, kr_dtype d) {
    switch (e) {
    case KR_EL_VOID: return 1;
    case KR_EL_CHAR: return d == KR_I8 || d == KR_U8;
    case KR_EL_I8: return d == KR_I8;
    case KR_EL_U8: return d == KR_U8;
    case KR_EL_I16: case KR_EL_U16: return d == KR_I16;
    case KR_EL_I32: case KR_EL_U32: return d == KR_I32;
    case KR_EL_I64: case KR_EL_U64: return d == KR_I64;
    case KR_EL_F16: return d == KR_F16;
    case KR_EL_BF16: return d == KR_BF16;
    case KR_EL_F32: return d == KR_F32;
    case KR_EL_F64: return d == KR_F64;
    case KR_EL_BOOL: return d == KR_BOOL;
    default: return 0;
    }
}

static const char *elem_dtype(kr_elem e) {
    switch (e) {
    case KR_EL_CHAR: return "i8 or u8";
    case KR_EL_I8: return "i8";
    case KR_EL_U8: return "u8";
    case KR_EL_I16: case KR_EL_U16: return "i16";
    case KR_EL_I32: case KR_EL_U32: return "i32";
    case KR_EL_I64: case KR_EL_U64: return "i64";
    case KR_EL_F16: return "f16";
    case KR_EL_BF16: return "bf16";
    case KR_EL_F32: return "f32";
    case KR_EL_F64: return "f64";
    case KR_EL_BOOL: return "bool";
    default: return "?";
    }
}

static int argfail(lua_State *L, const char *kname, int i, const kr_param *pa, const char *fmt,
                   const char *detail) {
    lua_pushfstring(L, fmt, detail);
    return luaL_error(L, "kernel '%s' argument %d (%s%s%s): %s", kname, i, pa->type_text,
                      pa->name[0] ? " " : "", pa->name, lua_tostring(L, -1));
}

static void int_arg(lua_State *L, int idx, const char *kname, int i, const kr_param *pa,
                    argval *v) {
    lua_Integer x = 0;
    if (lua_type(L, idx) == LUA_TBOOLEAN && pa->type == KR_PT_BOOL) {
        v->u8 = (uint8_t)lua_toboolean(L, idx);
        return;
    }
    if (lua_type(L, idx) != LUA_TNUMBER)
        argfail(L, kname, i, pa, "integer expected, got %s", luaL_typename(L, idx));
    if (lua_isinteger(L, idx)) {
        x = lua_tointeger(L, idx);
    } else {
        lua_Number f = lua_tonumber(L, idx);
        if (!lua_numbertointeger(f, &x) || (lua_Number)x != f)
            argfail(L, kname, i, pa, "%s is not an integer", luaL_tolstring(L, idx, NULL));
    }
    long long lo, hi;
    int is_unsigned64 = 0;
    switch (pa->type) {
    case KR_PT_I8: lo = INT8_MIN; hi = INT8_MAX; break;
    case KR_PT_U8: lo = 0; hi = UINT8_MAX; break;
    case KR_PT_I16: lo = INT16_MIN; hi = INT16_MAX; break;
    case KR_PT_U16: lo = 0; hi = UINT16_MAX; break;
    case KR_PT_I32: lo = INT32_MIN; hi = INT32_MAX; break;
    case KR_PT_U32: lo = 0; hi = UINT32_MAX; break;
    case KR_PT_I64: lo = INT64_MIN; hi = INT64_MAX; break;
    case KR_PT_U64: lo = 0; hi = INT64_MAX; is_unsigned64 = 1; break;
    case KR_PT_BOOL: lo = 0; hi = 1; break;
    default: lo = hi = 0; break;
    }
    if (x < lo || x > hi)
        argfail(L, kname, i, pa, "%s is out of range", luaL_tolstring(L, idx, NULL));
    (void)is_unsigned64;
    switch (pa->type) {
    case KR_PT_I8: v->i8 = (int8_t)x; break;
    case KR_PT_U8: case KR_PT_BOOL: v->u8 = (uint8_t)x; break;
    case KR_PT_I16: v->i16 = (int16_t)x; break;
    case KR_PT_U16: v->u16 = (uint16_t)x; break;
    case KR_PT_I32: v->i32 = (int32_t)x; break;
    case KR_PT_U32: v->u32 = (uint32_t)x; break;
    case KR_PT_I64: v->i64 = x; break;
    default: v->u64 = (uint64_t)x; break;
    }
}

/* A shape-only tensor of kreach.meta (a table whose metatable is named "kreach.MetaTensor"):
 * its dtype, or -1 when idx holds something else. */
static int meta_dtype(lua_State *L, int idx) {
    if (!lua_istable(L, idx) || luaL_getmetafield(L, idx, "__name") == LUA_TNIL) return -1;
    int is_meta = lua_type(L, -1) == LUA_TSTRING && !strcmp(lua_tostring(L, -1), "kreach.MetaTensor");
    lua_pop(L, 1);
    if (!is_meta) return -1;
    kr_dtype d;
    lua_getfield(L, idx, "dtype");
    int ok = lua_type(L, -1) == LUA_TSTRING && kr_dtype_parse(lua_tostring(L, -1), &d) == 0;
    lua_pop(L, 1);
    return ok ? (int)d : -1;
}

/* Converts argument `idx` for parameter `pa`. dry: a check without a launch, where a pointer
 * may also take a shape-only tensor (no address: nothing is passed, no alignment to check). */
static void convert_arg(lua_State *L, int idx, const char *kname, int i, const kr_param *pa,
                        argval *v, int dry) {
    switch (pa->type) {
    case KR_PT_PTR: {
        int md = dry ? meta_dtype(L, idx) : -1;
        if (md >= 0) {
            if (pa->elem == KR_EL_OTHER || pa->elem == KR_EL_NONE)
                argfail(L, kname, i, pa, "%s", "kreach has no tensor dtype for this pointer type "
                                               "(declare it void * or a plain element type)");
            if (!elem_matches(pa->elem, (kr_dtype)md)) {
                lua_pushfstring(L, "%s tensor expected, got %s tensor", elem_dtype(pa->elem),
                                kr_dtype_name((kr_dtype)md));
                argfail(L, kname, i, pa, "%s", lua_tostring(L, -1));
            }
            v->ptr = NULL;
            break;
        }
        kr_tensor *t = kr_lua_totensor(L, idx);
        if (!t) argfail(L, kname, i, pa, "tensor expected, got %s", luaL_typename(L, idx));
        if (!kr_tensor_live(t)) argfail(L, kname, i, pa, "%s", "the tensor has been freed");
        if (pa->elem == KR_EL_OTHER || pa->elem == KR_EL_NONE)
            argfail(L, kname, i, pa, "%s", "kreach has no tensor dtype for this pointer type "
                                           "(declare it void * or a plain element type)");
        if (!elem_matches(pa->elem, t->dtype)) {
            lua_pushfstring(L, "%s tensor expected, got %s tensor", elem_dtype(pa->elem),
                            kr_dtype_name(t->dtype));
            argfail(L, kname, i, pa, "%s", lua_tostring(L, -1));
        }
        v->ptr = kr_tensor_data(t);
        size_t align = kr_dtype_size(t->dtype) * (size_t)(pa->vec > 1 ? pa->vec : 1);
        if (pa->elem != KR_EL_VOID && ((uintptr_t)v->ptr % align) != 0)
            argfail(L, kname, i, pa, "%s", "the tensor's address is not aligned for this "
                                           "vector type (a narrowed view?)");
        break;
    }
    case KR_PT_F32: case KR_PT_F64: case KR_PT_F16: case KR_PT_BF16: {
        if (lua_type(L, idx) != LUA_TNUMBER)
            argfail(L, kname, i, pa, "number expected, got %s", luaL_typename(L, idx));
        double x = lua_tonumber(L, idx);
        if (pa->type == KR_PT_F32) v->f32 = (float)x;
        else if (pa->type == KR_PT_F64) v->f64 = x;
        else if (pa->type == KR_PT_F16) v->u16 = kr_f64_to_f16(x);
        else v->u16 = kr_f64_to_bf16(x);
        break;
    }
    case KR_PT_UNKNOWN:
        argfail(L, kname, i, pa, "%s", "kreach cannot pass this parameter type");
        break;
    default:
        int_arg(L, idx, kname, i, pa, v);
        break;
    }
}

/* Checks the count of the arguments at 2.. (the launch is at 1, its program on top) against
 * kernel `index`'s declaration and converts each; raises what is wrong. */
static void convert_args(lua_State *L, kr_program *p, int index, argval *vals, void **ptrs,
                         int dry) {
    const kr_kernel_sig *sig = kr_program_kernel_sig(p, index);
    if (sig->n_params < 0)
        luaL_error(L, "kernel '%s': kreach cannot read its parameter types",
                   kr_program_kernel_name(p, index));
    const char *kname = kr_program_kernel_name(p, index);
    int nargs = lua_gettop(L) - 2; /* minus the launch and its program */
    if (sig->n_params >= 0 && nargs != sig->n_params) {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (int i = 0; i < sig->n_params; i++) {
            if (i) luaL_addstring(&b, ", ");
            luaL_addstring(&b, sig->params[i].type_text);
            if (sig->params[i].name[0]) {
                luaL_addchar(&b, ' ');
                luaL_addstring(&b, sig->params[i].name);
            }
        }
        luaL_pushresult(&b);
        luaL_error(L, "kernel '%s' takes %d argument%s (%s), got %d", kname, sig->n_params,
                   sig->n_params == 1 ? "" : "s", lua_tostring(L, -1), nargs);
    }
    for (int i = 0; i < nargs && i < KR_SIG_MAX_PARAMS; i++) {
        convert_arg(L, i + 2, kname, i + 1, &sig->params[i], &vals[i], dry);
        ptrs[i] = &vals[i];
    }
}

/* launch(args...) */
static int l_launch_call(lua_State *L) {
    int index;
    kr_program *p = kernel_prog(L, 1, &index, KR_LAUNCH_MT);
    llaunch *l = lua_touserdata(L, 1);
    kr_context *ctx = kr_lua_ctx(L);
    /* loading first gives C++ kernels their exact (demangled) signatures */
    kr_status s = kr_program_load(ctx, p);
    if (s != KR_OK) return kr_lua_raise(L, ctx, s);
    argval vals[KR_SIG_MAX_PARAMS];
    void *ptrs[KR_SIG_MAX_PARAMS];
    convert_args(L, p, index, vals, ptrs, 0);
    s = kr_launch(ctx, p, index, l->grid, l->block, l->shared, ptrs);
    if (s != KR_OK) return kr_lua_raise(L, ctx, s);
    return 0;
}

/* launch:check(args...) -> true. What a launch checks, without a GPU and without launching:
 * the arguments against the kernel's declaration (a pointer may take a kreach.meta shape-only
 * tensor), and the configuration (already parsed as a launch parses it) against the limits
 * of the program's architecture and what its cubin says of the kernel (kr_launch_check, the
 * function every launch calls). Raises what the launch would raise. */
static int l_launch_check(lua_State *L) {
    int index;
    kr_program *p = kernel_prog(L, 1, &index, KR_LAUNCH_MT);
    llaunch *l = luaL_checkudata(L, 1, KR_LAUNCH_MT);
    kr_context *ctx = kr_lua_ctx(L);
    argval vals[KR_SIG_MAX_PARAMS];
    void *ptrs[KR_SIG_MAX_PARAMS];
    convert_args(L, p, index, vals, ptrs, 1);
    kr_launch_limits lim;
    kr_status s = kr_launch_limits_arch(ctx, p, index, &lim);
    if (s == KR_OK) s = kr_launch_check(ctx, p, index, &lim, l->grid, l->block, l->shared);
    if (s != KR_OK) return kr_lua_raise(L, ctx, s);
    lua_pushboolean(L, 1);
    return 1;
}

/* launch:limits([on_device]) -> the limits check() uses (on_device: those a launch uses): {max_threads_per_block =, max_block = {x, y, z},
 * max_grid =, shared_optin =, static_shared =, registers = (nil when unknown), from =} */
static int l_launch_limits(lua_State *L) {
    int index, on_device = lua_toboolean(L, 2);
    kr_program *p = kernel_prog(L, 1, &index, KR_LAUNCH_MT);
    kr_context *ctx = kr_lua_ctx(L);
    kr_launch_limits lim;
    kr_status s = on_device ? kr_launch_limits_device(ctx, p, index, &lim)
                            : kr_launch_limits_arch(ctx, p, index, &lim);
    if (s != KR_OK) return kr_lua_raise(L, ctx, s);
    lua_createtable(L, 0, 7);
    lua_pushinteger(L, lim.max_threads_per_block);
    lua_setfield(L, -2, "max_threads_per_block");
    const int *dims[2] = {lim.max_block, lim.max_grid};
    const char *names[2] = {"max_block", "max_grid"};
    for (int j = 0; j < 2; j++) {
        lua_createtable(L, 3, 0);
        for (int c = 0; c < 3; c++) {
            lua_pushinteger(L, dims[j][c]);
            lua_rawseti(L, -2, c + 1);
        }
        lua_setfield(L, -2, names[j]);
    }
    lua_pushinteger(L, (lua_Integer)lim.shared_optin);
    lua_setfield(L, -2, "shared_optin");
    lua_pushinteger(L, (lua_Integer)lim.static_shared);
    lua_setfield(L, -2, "static_shared");
    if (lim.num_regs > 0) {
        lua_pushinteger(L, lim.num_regs);
        lua_setfield(L, -2, "registers");
    }
    lua_pushstring(L, lim.from);
    lua_setfield(L, -2, "from");
    return 1;
}

/* k:launch(cfg, args...) is k(cfg)(args...) */
static int l_kernel_launch(lua_State *L) {
    lua_pushcfunction(L, l_kernel_call);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2);
    lua_call(L, 2, 1);
    lua_replace(L, 2); /* the launch takes the cfg's place; args follow */
    lua_remove(L, 1);
    lua_pushcfunction(L, l_launch_call);
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 0);
    return 0;
}

static int l_kernel_index_or_method(lua_State *L) {
    const char *k = lua_tostring(L, 2);
    if (k && !strcmp(k, "launch")) {
        lua_pushcfunction(L, l_kernel_launch);
        return 1;
    }
    return l_kernel_index(L);
}

static int l_kernel_tostring(lua_State *L) {
    int index;
    kr_program *p = kernel_prog(L, 1, &index, KR_KERNEL_MT);
    lua_pushfstring(L, "kreach.Kernel(%s)", kr_program_kernel_name(p, index));
    return 1;
}

static void newmt(lua_State *L, const char *name, const luaL_Reg *fns) {
    luaL_newmetatable(L, name);
    luaL_setfuncs(L, fns, 0);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 1);
}

/* arch_known(arch) -> true | nil, message: whether kreach has launch limits for the
 * architecture (lint's --arch). */
/* load() -> true, or fail and why NVRTC cannot be loaded (the first build loads it otherwise) */
static int l_nvrtc_load(lua_State *L) {
    const char *why = kr_nvrtc_ensure_loaded();
    if (!why) {
        lua_pushboolean(L, 1);
        return 1;
    }
    luaL_pushfail(L);
    lua_pushstring(L, why);
    return 2;
}

/* confine_source(source): every later build of exactly this source, in this process, is
 * confined (kr_nvrtc.h); kreach.candidate.directives calls it for each source it has checked. */
static int l_nvrtc_confine_source(lua_State *L) {
    if (kr_nvrtc_confine_source(luaL_checkstring(L, 1)) != 0) return luaL_error(L, "out of memory");
    return 0;
}

/* cache_max() -> the disk cache's cap in bytes from $KREACH_CACHE_MAX | fail, message */
static int l_nvrtc_cache_max(lua_State *L) {
    unsigned long long b;
    char err[320];
    if (kr_nvrtc_cache_max(&b, err, sizeof err) == 0) {
        lua_pushinteger(L, (lua_Integer)b);
        return 1;
    }
    luaL_pushfail(L);
    lua_pushstring(L, err);
    return 2;
}

static int l_nvrtc_arch_known(lua_State *L) {
    char msg[320];
    if (kr_launch_arch_known(luaL_checkstring(L, 1), msg, sizeof msg)) {
        lua_pushboolean(L, 1);
        return 1;
    }
    luaL_pushfail(L);
    lua_pushstring(L, msg);
    return 2;
}

int luaopen_kreach_nvrtc(lua_State *L) {
    static const luaL_Reg prog_mt[] = {{"__index", l_prog_index}, {"__gc", l_prog_free},
                                       {"__close", l_prog_free}, {"__tostring", l_prog_tostring},
                                       {NULL, NULL}};
    static const luaL_Reg kernel_mt[] = {{"__index", l_kernel_index_or_method},
                                         {"__call", l_kernel_call},
                                         {"__tostring", l_kernel_tostring}, {NULL, NULL}};
    static const luaL_Reg launch_mt[] = {{"__call", l_launch_call}, {NULL, NULL}};
    static const luaL_Reg launch_methods[] = {{"check", l_launch_check},
                                              {"limits", l_launch_limits}, {NULL, NULL}};
    newmt(L, KR_PROGRAM_MT, prog_mt);
    newmt(L, KR_KERNEL_MT, kernel_mt);
    newmt(L, KR_LAUNCH_MT, launch_mt);
    luaL_getmetatable(L, KR_LAUNCH_MT);
    luaL_newlib(L, launch_methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    static const luaL_Reg fns[] = {{"build", l_nvrtc_build}, {"arch_known", l_nvrtc_arch_known},
                                   {"load", l_nvrtc_load},
                                   {"confine_source", l_nvrtc_confine_source},
                                   {"cache_max", l_nvrtc_cache_max}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
