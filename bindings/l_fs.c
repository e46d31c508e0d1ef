/* l_fs.c: Lua binding of kr_fs (module "kreach.core.fs"): resolving paths, reading bounded
 * regular files, and atomic writers. Bindings layer, no GPU. A writer is a userdata whose
 * __gc, __close and :abort() share one idempotent release that removes the temporary file
 * unless :commit() renamed it into place. Expected failures return nil, message. */
#define _GNU_SOURCE
#include "kr_lua.h"
#include "kr_fs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define KR_FS_WRITER_MT "kreach.FsWriter"

typedef struct { kr_fs_writer *w; } lwriter;

/* resolve(path) -> absolute path, exists | nil, message */
static int l_fs_resolve(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    char err[512], *out = NULL;
    int exists = 0;
    if (kr_fs_resolve(path, &out, &exists, err, sizeof err) != 0) {
        luaL_pushfail(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushstring(L, out);
    free(out);
    lua_pushboolean(L, exists);
    return 2;
}

/* read_regular(path, max_bytes) -> contents | nil, message */
static int l_fs_read_regular(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    lua_Integer max = luaL_checkinteger(L, 2);
    luaL_argcheck(L, max >= 0, 2, "a limit of 0 bytes or more expected");
    char err[512], *buf = NULL;
    size_t n = 0;
    if (kr_fs_read_regular(path, (size_t)max, &buf, &n, err, sizeof err) != 0) {
        luaL_pushfail(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushlstring(L, buf, n);
    free(buf);
    return 1;
}

/* stat(path) -> {size =, dev =, ino =, mode = "file"|"directory"|..., mtime_ns =, ctime_ns =}
 * | nil, message. Follows links. The nanosecond times tell a change within the same second,
 * which lfs's whole seconds cannot. */
static int l_fs_stat(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    if (stat(path, &st) != 0) {
        luaL_pushfail(L);
        lua_pushfstring(L, "%s: %s", path, strerror(errno));
        return 2;
    }
    lua_createtable(L, 0, 6);
    lua_pushinteger(L, (lua_Integer)st.st_size);
    lua_setfield(L, -2, "size");
    lua_pushinteger(L, (lua_Integer)st.st_dev);
    lua_setfield(L, -2, "dev");
    lua_pushinteger(L, (lua_Integer)st.st_ino);
    lua_setfield(L, -2, "ino");
    lua_pushstring(L, S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "directory"
                      : S_ISFIFO(st.st_mode) ? "fifo" : S_ISCHR(st.st_mode) ? "char device"
                      : S_ISBLK(st.st_mode) ? "block device" : S_ISSOCK(st.st_mode) ? "socket"
                      : "other");
    lua_setfield(L, -2, "mode");
    lua_pushinteger(L, (lua_Integer)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
    lua_setfield(L, -2, "mtime_ns");
    lua_pushinteger(L, (lua_Integer)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec);
    lua_setfield(L, -2, "ctime_ns");
    return 1;
}

static lwriter *checkwriter(lua_State *L, int idx) {
    lwriter *u = luaL_checkudata(L, idx, KR_FS_WRITER_MT);
    if (!u->w) luaL_argerror(L, idx, "the writer is closed");
    return u;
}

/* writer(path) -> writer | nil, message */
static int l_fs_writer(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    lwriter *u = lua_newuserdatauv(L, sizeof *u, 0);
    u->w = NULL;
    luaL_setmetatable(L, KR_FS_WRITER_MT);
    char err[512];
    if (!(u->w = kr_fs_writer_open(path, err, sizeof err))) {
        luaL_pushfail(L);
        lua_pushstring(L, err);
        return 2;
    }
    return 1;
}

/* w:write(...) -> w | nil, message (strings and numbers, as file:write takes them) */
static int l_writer_write(lua_State *L) {
    lwriter *u = checkwriter(L, 1);
    int n = lua_gettop(L);
    for (int i = 2; i <= n; i++) {
        size_t len;
        const char *s = luaL_checklstring(L, i, &len);
        char err[512];
        if (kr_fs_writer_write(u->w, s, len, err, sizeof err) != 0) {
            luaL_pushfail(L);
            lua_pushstring(L, err);
            return 2;
        }
    }
    lua_settop(L, 1);
    return 1;
}

/* w:commit() -> true | nil, message; the writer is closed either way */
static int l_writer_commit(lua_State *L) {
    lwriter *u = checkwriter(L, 1);
    kr_fs_writer *w = u->w;
    u->w = NULL;
    char err[512];
    if (kr_fs_writer_commit(w, err, sizeof err) != 0) {
        luaL_pushfail(L);
        lua_pushstring(L, err);
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int l_writer_abort(lua_State *L) {
    lwriter *u = luaL_checkudata(L, 1, KR_FS_WRITER_MT);
    kr_fs_writer_abort(u->w);
    u->w = NULL;
    return 0;
}

static int l_writer_temp(lua_State *L) {
    lua_pushstring(L, kr_fs_writer_temp(checkwriter(L, 1)->w));
    return 1;
}

int luaopen_kreach_fs(lua_State *L) {
    static const luaL_Reg methods[] = {{"write", l_writer_write}, {"commit", l_writer_commit},
                                       {"abort", l_writer_abort}, {"temp", l_writer_temp},
                                       {NULL, NULL}};
    kr_lua_newclass(L, KR_FS_WRITER_MT, methods, l_writer_abort, NULL);
    static const luaL_Reg fns[] = {{"resolve", l_fs_resolve}, {"read_regular", l_fs_read_regular},
                                   {"stat", l_fs_stat},
                                   {"writer", l_fs_writer}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
