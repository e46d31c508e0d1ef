/* l_sqlite.c: a thin Lua binding of SQLite (module "kreach.core.sqlite"), for the results store.
 * Bindings layer, no GPU. A database is a userdata ("kreach.Sqlite") whose __gc, __close and
 * :close() share one idempotent release; prepared statements are cached per database by SQL
 * text. Misuse (a closed database, an unbindable value) raises; an SQL error returns nil,
 * message, extended code. Integers bind as int64 and come back as Lua integers. */
#include "kr_lua.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#define KR_SQLITE_MT "kreach.Sqlite"
#define KR_SQLITE_ROWS_MT "kreach.SqliteRows"
#define CACHE_MAX 64 /* statements kept prepared per database; the cache is emptied past this */

typedef struct {
    sqlite3 *db;
    int n_cached;
} ldb;

typedef struct {
    sqlite3_stmt *stmt;
    ldb *owner; /* kept alive through the iterator's user value */
} lrows;

static ldb *checkdb(lua_State *L, int idx) {
    ldb *u = luaL_checkudata(L, idx, KR_SQLITE_MT);
    if (!u->db) luaL_argerror(L, idx, "database is closed");
    return u;
}

/* Pushes nil, errmsg, extended code; returns 3. */
static int sql_fail(lua_State *L, sqlite3 *db, int rc) {
    luaL_pushfail(L);
    lua_pushstring(L, sqlite3_errmsg(db));
    lua_pushinteger(L, rc);
    return 3;
}

/* Pushes "file:<path, escaped>?immutable=1": SQLite then takes no locks and makes no -wal or
 * -shm file, so a file can be inspected without leaving anything beside it. */
static const char *push_immutable_uri(lua_State *L, const char *path) {
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addstring(&b, path[0] == '/' ? "file://" : "file:");
    for (const char *p = path; *p; p++) {
        if (*p == '%' || *p == '?' || *p == '#') {
            char esc[4];
            snprintf(esc, sizeof esc, "%%%02X", (unsigned char)*p);
            luaL_addstring(&b, esc);
        } else luaL_addchar(&b, *p);
    }
    luaL_addstring(&b, "?immutable=1");
    luaL_pushresult(&b);
    return lua_tostring(L, -1);
}

/* open(path, {readonly=, create=, busy_timeout_ms=, immutable=}) -> db | nil, message */
static int l_sqlite_open(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    int readonly = 0, create = 1, immutable = 0;
    lua_Integer busy_ms = 5000;
    if (!lua_isnoneornil(L, 2)) {
        static const char *const known[] = {"readonly", "create", "busy_timeout_ms", "immutable",
                                            NULL};
        luaL_checktype(L, 2, LUA_TTABLE);
        kr_lua_check_options(L, 2, "sqlite.open", known);
        readonly = kr_lua_optbool_field(L, 2, "readonly", 0);
        create = kr_lua_optbool_field(L, 2, "create", 1);
        immutable = kr_lua_optbool_field(L, 2, "immutable", 0);
        busy_ms = kr_lua_optint_field(L, 2, "busy_timeout_ms", 5000);
        if (busy_ms < 0 || busy_ms > 0x7fffffff)
            luaL_error(L, "bad option 'busy_timeout_ms' (0 to 2^31-1 expected)");
    }
    const char *name = immutable ? push_immutable_uri(L, path) : path;
    if (immutable) readonly = 1;
    ldb *u = lua_newuserdatauv(L, sizeof *u, 1);
    u->db = NULL;
    u->n_cached = 0;
    luaL_setmetatable(L, KR_SQLITE_MT);
    lua_newtable(L); /* the statement cache: sql -> light userdata */
    lua_setiuservalue(L, -2, 1);
    int flags = readonly ? SQLITE_OPEN_READONLY
                         : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    if (immutable) flags |= SQLITE_OPEN_URI;
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(name, &db, flags, NULL);
    if (rc != SQLITE_OK) {
        luaL_pushfail(L);
        lua_pushfstring(L, "%s: %s", path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close_v2(db);
        return 2;
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, (int)busy_ms);
    u->db = db;
    return 1;
}

/* Finalises every statement of the database (cached ones and live iterators' alike), then
 * closes it. */
static int l_db_close(lua_State *L) {
    ldb *u = luaL_checkudata(L, 1, KR_SQLITE_MT);
    if (!u->db) return 0;
    sqlite3_stmt *s;
    while ((s = sqlite3_next_stmt(u->db, NULL)) != NULL) sqlite3_finalize(s);
    sqlite3_close_v2(u->db);
    u->db = NULL;
    u->n_cached = 0;
    lua_pushnil(L); /* the cache's pointers are dangling now; a closed db never reads it */
    lua_setiuservalue(L, 1, 1);
    return 0;
}

static int l_db_tostring(lua_State *L) {
    ldb *u = luaL_checkudata(L, 1, KR_SQLITE_MT);
    if (!u->db) lua_pushliteral(L, "sqlite database (closed)");
    else {
        const char *f = sqlite3_db_filename(u->db, "main");
        lua_pushfstring(L, "sqlite database (%s)", f && *f ? f : ":memory:");
    }
    return 1;
}

static void clear_cache(lua_State *L, int dbidx, ldb *u) {
    lua_getiuservalue(L, dbidx, 1);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        sqlite3_finalize(lua_touserdata(L, -1));
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    lua_newtable(L);
    lua_setiuservalue(L, dbidx, 1);
    u->n_cached = 0;
}

/* Prepares one statement. Returns SQLITE_OK with *out set (NULL for an empty statement), or an
 * SQL error code. Raises when `sql` holds more than one statement. */
static int prepare_one(lua_State *L, sqlite3 *db, const char *sql, size_t len, sqlite3_stmt **out,
                       const char *fname) {
    const char *tail = NULL;
    int rc = sqlite3_prepare_v2(db, sql, (int)len, out, &tail);
    if (rc != SQLITE_OK) return rc;
    if (tail && tail < sql + len) {
        sqlite3_stmt *more = NULL;
        int rc2 = sqlite3_prepare_v2(db, tail, (int)(sql + len - tail), &more, NULL);
        if (rc2 != SQLITE_OK || more) {
            sqlite3_finalize(more);
            sqlite3_finalize(*out);
            *out = NULL;
            luaL_error(L, "%s takes one statement (db:script runs several)", fname);
        }
    }
    return SQLITE_OK;
}

/* A prepared statement for `sql`, from the cache or freshly prepared (and cached), reset and
 * with no bindings. Returns SQLITE_OK or an SQL error code. */
static int cached_stmt(lua_State *L, int dbidx, ldb *u, int sqlidx, sqlite3_stmt **out,
                       const char *fname) {
    size_t len;
    const char *sql = lua_tolstring(L, sqlidx, &len);
    lua_getiuservalue(L, dbidx, 1);
    lua_pushvalue(L, sqlidx);
    if (lua_rawget(L, -2) == LUA_TLIGHTUSERDATA) {
        *out = lua_touserdata(L, -1);
        lua_pop(L, 2);
        sqlite3_reset(*out);
        sqlite3_clear_bindings(*out);
        return SQLITE_OK;
    }
    lua_pop(L, 2);
    int rc = prepare_one(L, u->db, sql, len, out, fname);
    if (rc != SQLITE_OK || !*out) return rc;
    if (u->n_cached >= CACHE_MAX) clear_cache(L, dbidx, u);
    lua_getiuservalue(L, dbidx, 1);
    lua_pushvalue(L, sqlidx);
    lua_pushlightuserdata(L, *out);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    u->n_cached++;
    return SQLITE_OK;
}

/* Binds the arguments first..top to the statement's parameters, in order. Raises (after
 * resetting the statement) on a count mismatch or an unbindable value. */
static void bind_args(lua_State *L, sqlite3_stmt *st, int first) {
    int n = lua_gettop(L) - first + 1;
    int want = sqlite3_bind_parameter_count(st);
    if (n != want) {
        sqlite3_reset(st);
        luaL_error(L, "the statement has %d parameter%s, %d value%s given", want,
                   want == 1 ? "" : "s", n, n == 1 ? "" : "s");
    }
    for (int i = 0; i < n; i++) {
        int idx = first + i, rc;
        switch (lua_type(L, idx)) {
        case LUA_TNIL: rc = sqlite3_bind_null(st, i + 1); break;
        case LUA_TBOOLEAN: rc = sqlite3_bind_int(st, i + 1, lua_toboolean(L, idx)); break;
        case LUA_TNUMBER:
            if (lua_isinteger(L, idx)) rc = sqlite3_bind_int64(st, i + 1, lua_tointeger(L, idx));
            else rc = sqlite3_bind_double(st, i + 1, lua_tonumber(L, idx));
            break;
        case LUA_TSTRING: {
            size_t len;
            const char *s = lua_tolstring(L, idx, &len);
            rc = sqlite3_bind_text64(st, i + 1, s, len, SQLITE_TRANSIENT, SQLITE_UTF8);
            break;
        }
        default:
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            luaL_typeerror(L, idx, "number, string, boolean or nil");
            return;
        }
        if (rc != SQLITE_OK) {
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            luaL_error(L, "cannot bind parameter %d: %s", i + 1, sqlite3_errstr(rc));
        }
    }
}

/* Pushes the current row as a table keyed by column name; NULL columns are absent. */
static void push_row(lua_State *L, sqlite3_stmt *st) {
    int n = sqlite3_column_count(st);
    lua_createtable(L, 0, n);
    for (int i = 0; i < n; i++) {
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_NULL: continue;
        case SQLITE_INTEGER: lua_pushinteger(L, sqlite3_column_int64(st, i)); break;
        case SQLITE_FLOAT: lua_pushnumber(L, sqlite3_column_double(st, i)); break;
        case SQLITE_TEXT: {
            const char *s = (const char *)sqlite3_column_text(st, i);
            lua_pushlstring(L, s ? s : "", (size_t)sqlite3_column_bytes(st, i));
            break;
        }
        default: {
            const void *b = sqlite3_column_blob(st, i);
            lua_pushlstring(L, b ? b : "", (size_t)sqlite3_column_bytes(st, i));
        }
        }
        lua_setfield(L, -2, sqlite3_column_name(st, i));
    }
}

/* A cached statement goes back to the cache reset, with no values bound. */
static void stmt_done(sqlite3_stmt *st) {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* db:exec(sql, ...) -> number of changed rows | nil, message, code */
static int l_db_exec(lua_State *L) {
    ldb *u = checkdb(L, 1);
    luaL_checkstring(L, 2);
    sqlite3_stmt *st;
    int rc = cached_stmt(L, 1, u, 2, &st, "exec");
    if (rc != SQLITE_OK) return sql_fail(L, u->db, rc);
    if (!st) {
        if (lua_gettop(L) > 2) luaL_error(L, "the statement has 0 parameters, %d values given",
                                          lua_gettop(L) - 2);
        lua_pushinteger(L, 0);
        return 1;
    }
    bind_args(L, st, 3);
    sqlite3_int64 before = sqlite3_total_changes64(u->db);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {}
    if (rc != SQLITE_DONE) {
        sql_fail(L, u->db, rc);
        stmt_done(st);
        return 3;
    }
    stmt_done(st);
    lua_pushinteger(L, sqlite3_total_changes64(u->db) == before ? 0 : sqlite3_changes64(u->db));
    return 1;
}

/* db:query(sql, ...) -> { row, ... } | nil, message, code */
static int l_db_query(lua_State *L) {
    ldb *u = checkdb(L, 1);
    luaL_checkstring(L, 2);
    sqlite3_stmt *st;
    int rc = cached_stmt(L, 1, u, 2, &st, "query");
    if (rc != SQLITE_OK) return sql_fail(L, u->db, rc);
    if (!st) {
        lua_newtable(L);
        return 1;
    }
    bind_args(L, st, 3);
    lua_newtable(L);
    lua_Integer n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        push_row(L, st);
        lua_rawseti(L, -2, ++n);
    }
    if (rc != SQLITE_DONE) {
        sql_fail(L, u->db, rc);
        stmt_done(st);
        return 3;
    }
    stmt_done(st);
    return 1;
}

static void rows_release(lrows *r) {
    /* a closed database has finalised every statement already */
    if (r->stmt && r->owner && r->owner->db) sqlite3_finalize(r->stmt);
    r->stmt = NULL;
}

static int l_rows_gc(lua_State *L) {
    rows_release(luaL_checkudata(L, 1, KR_SQLITE_ROWS_MT));
    return 0;
}

static int rows_next(lua_State *L) {
    lrows *r = lua_touserdata(L, lua_upvalueindex(1));
    if (!r->stmt) return 0;
    if (!r->owner->db) {
        r->stmt = NULL;
        return luaL_error(L, "database closed during rows()");
    }
    int rc = sqlite3_step(r->stmt);
    if (rc == SQLITE_ROW) {
        push_row(L, r->stmt);
        return 1;
    }
    if (rc == SQLITE_DONE) {
        rows_release(r);
        return 0;
    }
    lua_pushstring(L, sqlite3_errmsg(r->owner->db));
    rows_release(r);
    return luaL_error(L, "%s", lua_tostring(L, -1));
}

/* db:rows(sql, ...) -> iterator, nil, nil, closing value. The statement is not the cached one,
 * so a loop body may run other statements. Raises on an SQL error, also before the first row
 * (the result is meant for a for loop). */
static int l_db_rows(lua_State *L) {
    ldb *u = checkdb(L, 1);
    size_t len;
    const char *sql = luaL_checklstring(L, 2, &len);
    int top = lua_gettop(L);
    lrows *r = lua_newuserdatauv(L, sizeof *r, 1);
    r->stmt = NULL;
    r->owner = u;
    luaL_setmetatable(L, KR_SQLITE_ROWS_MT);
    lua_pushvalue(L, 1);
    lua_setiuservalue(L, -2, 1);
    int rc = prepare_one(L, u->db, sql, len, &r->stmt, "rows");
    if (rc != SQLITE_OK) return luaL_error(L, "%s", sqlite3_errmsg(u->db));
    lua_insert(L, 3); /* db, sql, rows, arguments... */
    if (r->stmt) bind_args(L, r->stmt, 4);
    else if (top > 2) luaL_error(L, "the statement has 0 parameters, %d values given", top - 2);
    lua_settop(L, 3);
    lua_pushvalue(L, 3);
    lua_pushcclosure(L, rows_next, 1);
    lua_pushnil(L);
    lua_pushnil(L);
    lua_pushvalue(L, 3); /* iterator, nil, nil, rows (the to-be-closed value of a generic for) */
    return 4;
}

/* db:script(sql) -> true | nil, message, code: several statements, no parameters */
static int l_db_script(lua_State *L) {
    ldb *u = checkdb(L, 1);
    const char *sql = luaL_checkstring(L, 2);
    char *err = NULL;
    int rc = sqlite3_exec(u->db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK) {
        luaL_pushfail(L);
        lua_pushstring(L, err ? err : sqlite3_errmsg(u->db));
        lua_pushinteger(L, sqlite3_extended_errcode(u->db));
        sqlite3_free(err);
        return 3;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static int l_db_last_insert_rowid(lua_State *L) {
    lua_pushinteger(L, sqlite3_last_insert_rowid(checkdb(L, 1)->db));
    return 1;
}

static int l_db_changes(lua_State *L) {
    lua_pushinteger(L, sqlite3_changes64(checkdb(L, 1)->db));
    return 1;
}

static int l_db_errmsg(lua_State *L) {
    lua_pushstring(L, sqlite3_errmsg(checkdb(L, 1)->db));
    return 1;
}

int luaopen_kreach_sqlite(lua_State *L) {
    static const luaL_Reg methods[] = {
        {"exec", l_db_exec},       {"query", l_db_query},
        {"rows", l_db_rows},       {"script", l_db_script},
        {"last_insert_rowid", l_db_last_insert_rowid},
        {"changes", l_db_changes}, {"errmsg", l_db_errmsg},
        {"close", l_db_close},     {NULL, NULL}};
    kr_lua_newclass(L, KR_SQLITE_MT, methods, l_db_close, l_db_tostring);
    kr_lua_newclass(L, KR_SQLITE_ROWS_MT, NULL, l_rows_gc, NULL);
    static const luaL_Reg fns[] = {{"open", l_sqlite_open}, {NULL, NULL}};
    luaL_newlib(L, fns);
    lua_pushstring(L, sqlite3_libversion());
    lua_setfield(L, -2, "version");
    return 1;
}
