-- kreach help [command]: lists the commands, or shows one command's usage.
local argparse = require "argparse"
local cli = require "kreach.cli"

return {
  summary = "List the commands, or show the usage of one.",
  parser = function(p)
    p:argument("command", "A command to describe."):args("?")
  end,
  run = function(args)
    if args.command then
      local cmd = cli.load_command(args.command)
      if not cmd then
        io.stderr:write(("kreach: unknown command '%s'\n"):format(args.command))
        return 2
      end
      local p = argparse("kreach " .. args.command, cmd.summary)
      if cmd.parser then cmd.parser(p) end
      io.write(p:get_help(), "\n")
      return 0
    end
    io.write([[
kreach: benchmark GPU kernels honestly.

usage: kreach [--device N] script.lua [args]   run a Lua script (like lua)
       kreach [--device N] -e 'code' [args]     run a string of Lua
       kreach [--device N] <command> [args]    run a command
       kreach --version | -h | --help

options:
  --device N   use CUDA device N, or host: the CPU emulation (also KREACH_DEVICE)
  --version    print the version and exit
  -h, --help   this text (the same as 'kreach help')

commands:
]])
    local names = cli.commands()
    local width = 0
    for _, n in ipairs(names) do width = math.max(width, #n) end
    for _, n in ipairs(names) do
      local ok, cmd = pcall(cli.load_command, n)
      local summary = ok and cmd and cmd.summary or "(does not load: " .. tostring(cmd) .. ")"
      if not (ok and cmd and cmd.hidden) then
        io.write(("  %-" .. width .. "s  %s\n"):format(n, summary))
      end
    end
    io.write("\n'kreach help <command>' shows a command's options.\n")
    return 0
  end,
}
