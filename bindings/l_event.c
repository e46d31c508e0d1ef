/* l_event.c: Lua binding of kr_event (module "kreach.core.event").
 * Bindings layer. An event is a userdata; __gc, __close and :free() share one release. */
#include "kr_lua.h"
#include "kr_event.h"

typedef struct { kr_event *e; } levent;

static levent *checkevent(lua_State *L, int idx) {
    levent *e = luaL_checkudata(L, idx, KR_EVENT_MT);
    if (!e->e) luaL_argerror(L, idx, "event has been freed");
    return e;
}

static int check(lua_State *L, kr_status s) {
    return s == KR_OK ? 0 : kr_lua_raise(L, kr_lua_ctx(L), s);
}

static int l_event_new(lua_State *L) {
    levent *e = lua_newuserdatauv(L, sizeof *e, 0);
    e->e = NULL;
    luaL_setmetatable(L, KR_EVENT_MT);
    check(L, kr_event_new(kr_lua_ctx(L), &e->e));
    return 1;
}

static int l_event_free(lua_State *L) {
    levent *e = luaL_checkudata(L, 1, KR_EVENT_MT);
    kr_event_free(e->e);
    e->e = NULL;
    return 0;
}

static int l_event_record(lua_State *L) {
    check(L, kr_event_record(kr_lua_ctx(L), checkevent(L, 1)->e));
    lua_settop(L, 1);
    return 1;
}

static int l_event_synchronize(lua_State *L) {
    check(L, kr_event_sync(kr_lua_ctx(L), checkevent(L, 1)->e));
    return 0;
}

/* start:elapsed_ms(end) */
static int l_event_elapsed_ms(lua_State *L) {
    float ms = 0;
    check(L, kr_event_elapsed_ms(kr_lua_ctx(L), checkevent(L, 1)->e, checkevent(L, 2)->e, &ms));
    lua_pushnumber(L, ms);
    return 1;
}

static int l_event_query(lua_State *L) {
    int done = 0;
    check(L, kr_event_query(kr_lua_ctx(L), checkevent(L, 1)->e, &done));
    lua_pushboolean(L, done);
    return 1;
}

int luaopen_kreach_event(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"record", l_event_record}, {"synchronize", l_event_synchronize},
        {"elapsed_ms", l_event_elapsed_ms}, {"query", l_event_query},
        {"free", l_event_free}, {NULL, NULL}};
    kr_lua_newclass(L, KR_EVENT_MT, methods, l_event_free, NULL);
    static const luaL_Reg fns[] = {{"new", l_event_new}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
