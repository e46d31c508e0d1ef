/* main.c: the kreach executable. Runs `kreach script.lua args` like `lua script.lua args`, and
 * `kreach <command> args` through the embedded Lua library (scripts/kreach/cmd/<command>.lua).
 * Bindings layer. Everything runs in lua_pcall with a traceback handler; the exit status
 * follows docs/cli.md ("Exit status"): 0 ok, 1 a check failed, 2 usage, 3 a script failed to
 * load, 77 no GPU, 99 internal error. */
#define _POSIX_C_SOURCE 200809L
#include "kr_lua.h"
#include "kr_embedded.h"
#include "kr_proc.h"

#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_CHECK = 1, EXIT_USAGE = 2, EXIT_LOAD = 3, EXIT_NOGPU = 77, EXIT_INTERNAL = 99 };

static const char *progname = "kreach";

static void usage(FILE *f) {
    fprintf(f,
            "usage: kreach [options] script.lua [args]   run a Lua script (like lua)\n"
            "       kreach [options] <command> [args]    run a command ('kreach help' lists them)\n"
            "       kreach [options] -e 'code' [args]     run a string of Lua\n"
            "options:\n"
            "  --device N   use CUDA device N, or host: the CPU emulation (also KREACH_DEVICE)\n"
            "  --version    print the version and exit\n"
            "  -h, --help   this text\n");
}

static int traceback(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (!msg) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

/* Searcher for modules embedded at build time. With $KREACH_LUA_DIR set, files there win, so
 * a source tree can be edited and run without a rebuild. */
static int embedded_searcher(lua_State *L) {
    const char *name = luaL_checkstring(L, 1);
    for (const kr_embedded_file *e = kr_embedded_files; e->name; e++) {
        if (strcmp(e->name, name) != 0) continue;
        lua_pushfstring(L, "@%s", e->path);
        if (luaL_loadbufferx(L, (const char *)e->data, e->size, lua_tostring(L, -1), "t") != LUA_OK)
            return lua_error(L);
        lua_pushfstring(L, "embedded:%s", e->path);
        return 2;
    }
    lua_pushfstring(L, "no embedded module '%s'", name);
    return 1;
}

static void setup_package(lua_State *L) {
    lua_getglobal(L, "package");
    /* Nothing is looked up in the system's Lua directories unless LUA_PATH/LUA_CPATH say so:
     * the binary must behave the same on a machine with no Lua installed. */
    const char *lp = getenv("LUA_PATH_5_4");
    if (!lp) lp = getenv("LUA_PATH");
    const char *dev = getenv("KREACH_LUA_DIR");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    if (dev && *dev) {
        lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;", dev, dev);
        luaL_addvalue(&b);
    }
    luaL_addstring(&b, "./?.lua;./?/init.lua");
    if (lp && *lp) {
        luaL_addchar(&b, ';');
        luaL_addstring(&b, lp);
    }
    luaL_pushresult(&b);
    lua_setfield(L, -2, "path");
    const char *cp = getenv("LUA_CPATH_5_4");
    if (!cp) cp = getenv("LUA_CPATH");
    lua_pushstring(L, cp ? cp : "");
    lua_setfield(L, -2, "cpath");
    /* searchers: preload, then (dev dir via package.path when set), embedded, path, cpath */
    lua_getfield(L, -1, "searchers");
    int n = (int)luaL_len(L, -1);
    int at = (dev && *dev) ? 3 : 2;
    for (int i = n; i >= at; i--) {
        lua_geti(L, -1, i);
        lua_seti(L, -2, i + 1);
    }
    lua_pushcfunction(L, embedded_searcher);
    lua_seti(L, -2, at);
    lua_pop(L, 2);

    /* kreach.embedded: the names of the embedded modules, for `kreach help` */
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_newtable(L);
    int i = 1;
    for (const kr_embedded_file *e = kr_embedded_files; e->name; e++) {
        if (strchr(e->name, '/')) continue; /* a file, not a module */
        lua_pushstring(L, e->name);
        lua_rawseti(L, -2, i++);
    }
    lua_setfield(L, -2, "kreach.embedded");
    /* kreach.embedded_files: the embedded files that are not Lua modules (the Python the
     * workers run), name -> contents */
    lua_newtable(L);
    for (const kr_embedded_file *e = kr_embedded_files; e->name; e++) {
        size_t len = strlen(e->name);
        if (len < 3 || strcmp(e->name + len - 3, ".py") != 0) continue;
        lua_pushlstring(L, (const char *)e->data, e->size);
        lua_setfield(L, -2, e->name);
    }
    lua_setfield(L, -2, "kreach.embedded_files");
    lua_pop(L, 1);
}

static void push_arg_table(lua_State *L, char **argv, int argc, int script_at) {
    /* like lua.c: arg[0] is the script, arg[1..] its arguments, negatives before it */
    lua_createtable(L, argc - script_at - 1, script_at + 1);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - script_at);
    }
    lua_setglobal(L, "arg");
}

static int report(lua_State *L, int status, int code_if_error) {
    if (status == LUA_OK) return 0;
    const char *msg = luaL_tolstring(L, -1, NULL); /* error objects may have __tostring */
    kr_context *ctx = kr_lua_ctx(L);
    /* A failure whose cause is the missing GPU is a skip, not an error. */
    if (kr_context_state(ctx) == -1 && msg && strstr(msg, "no CUDA device")) {
        const char *m = strstr(msg, "no CUDA device");
        const char *nl = strchr(m, '\n');
        fprintf(stderr, "%s: %.*s\n", progname, nl ? (int)(nl - m) : (int)strlen(m), m);
        return EXIT_NOGPU;
    }
    fprintf(stderr, "%s: %s\n", progname, msg ? msg : "(error object is not a string)");
    return code_if_error;
}

/* Runs f with n arguments on the stack under the traceback handler. */
static int docall(lua_State *L, int nargs) {
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, traceback);
    lua_insert(L, base);
    int st = lua_pcall(L, nargs, 1, base);
    lua_remove(L, base);
    return st;
}

/* Exit status from a chunk's results: an integer is used as it is, false is a failed check. */
static int result_code(lua_State *L) {
    if (lua_isinteger(L, -1)) return (int)lua_tointeger(L, -1);
    if (lua_isboolean(L, -1) && !lua_toboolean(L, -1)) return EXIT_CHECK;
    return 0;
}

static int run_script(lua_State *L, char **argv, int argc, int at) {
    push_arg_table(L, argv, argc, at);
    const char *path = argv[at];
    int st = strcmp(path, "-") == 0 ? luaL_loadfile(L, NULL) : luaL_loadfile(L, path);
    if (st != LUA_OK) return report(L, st, EXIT_LOAD);
    for (int i = at + 1; i < argc; i++) lua_pushstring(L, argv[i]);
    st = docall(L, argc - at - 1);
    if (st != LUA_OK) return report(L, st, EXIT_CHECK);
    lua_pop(L, 1);
    return 0; /* like lua: a script's return value does not set the status; os.exit does */
}

static int run_string(lua_State *L, const char *code, char **argv, int argc, int at) {
    push_arg_table(L, argv, argc, at);
    int st = luaL_loadbuffer(L, code, strlen(code), "=(command line)");
    if (st != LUA_OK) return report(L, st, EXIT_LOAD);
    st = docall(L, 0);
    if (st != LUA_OK) return report(L, st, EXIT_CHECK);
    lua_pop(L, 1);
    return 0;
}

/* Commands: require("kreach.cli").main(name, args...) returns the exit status. */
static int run_command(lua_State *L, char **argv, int argc, int at) {
    push_arg_table(L, argv, argc, at);
    lua_getglobal(L, "require");
    lua_pushstring(L, "kreach.cli");
    int st = docall(L, 1);
    if (st != LUA_OK) return report(L, st, EXIT_INTERNAL);
    lua_getfield(L, -1, "main");
    for (int i = at; i < argc; i++) lua_pushstring(L, argv[i]);
    st = docall(L, argc - at);
    if (st != LUA_OK) return report(L, st, EXIT_INTERNAL);
    return result_code(L);
}

static int looks_like_script(const char *a) {
    size_t n = strlen(a);
    return strchr(a, '/') || (n > 4 && strcmp(a + n - 4, ".lua") == 0) || strcmp(a, "-") == 0;
}

int main(int argc, char **argv) {
    /* internal: the reaper a worker runs under (kr_proc_opts.reaper), before anything starts */
    if (argc >= 2 && !strcmp(argv[1], KR_PROC_REAPER_ARG)) return kr_proc_reaper_main(argc - 2, argv + 2);
    int i = 1;
    const char *code = NULL;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--version")) {
            printf("kreach %s\n", KREACH_VERSION_STRING);
            return 0;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            i = argc; /* the help command: one text for kreach, kreach -h and kreach help */
            break;
        } else if (!strcmp(a, "--device") || !strncmp(a, "--device=", 9)) {
            const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
            char *end = NULL;
            long d = v ? strtol(v, &end, 10) : -1;
            if (v && !strcmp(v, "host")) {
                /* the host device: kreach's CUDA emulation on the CPU (docs/scripting.md) */
            } else if (!v || !*v || *end || d < 0) {
                fprintf(stderr, "%s: --device takes a device number, or host\n", progname);
                return EXIT_USAGE;
            }
            setenv("KREACH_DEVICE", v, 1); /* worker processes inherit the choice */
        } else if (!strcmp(a, "-e")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: -e takes a string of Lua\n", progname);
                return EXIT_USAGE;
            }
            code = argv[++i];
            i++;
            break;
        } else if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "%s: unknown option '%s'\n", progname, a);
            usage(stderr);
            return EXIT_USAGE;
        } else {
            break;
        }
    }

    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "%s: cannot create a Lua state (out of memory)\n", progname);
        return EXIT_INTERNAL;
    }
    kr_lua_count_heap(L);
    luaL_openlibs(L);
    kr_lua_openlibs(L);
    setup_package(L);

    int rc;
    if (code) rc = run_string(L, code, argv, argc, i - 1);
    else if (i >= argc) {
        /* no script and no command: the help command */
        char *help[] = {argv[0], "help"};
        rc = run_command(L, help, 2, 1);
    } else if (looks_like_script(argv[i])) rc = run_script(L, argv, argc, i);
    else rc = run_command(L, argv, argc, i);
    fflush(stdout);
    lua_close(L);
    return rc;
}
