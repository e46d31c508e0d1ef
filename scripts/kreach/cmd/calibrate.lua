-- kreach calibrate: measures this device's copy bandwidth and matrix throughput per dtype
-- (kreach.judge.calibrate), stores them in the results database and prints them. Evaluations set
-- their times against these ceilings (the speed-of-light bound); `kreach eval` and `bench`
-- calibrate on their own when the database has no calibration of the device.
local kreach = require "kreach"
local calibrate = require "kreach.judge.calibrate"
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local json = require "kreach.json"
local store = require "kreach.results.store"

return {
  summary = "Measure this GPU's copy bandwidth and matrix throughput (the speed-of-light ceilings).",
  parser = function(p)
    cli.db_option(p)
    p:option("--gemm-n", "Size of the square matrix products (default 8192).", nil):convert(cli.positive_integer)
    p:option("--repeats", "Timed repeats of each measurement (default 10).", nil):convert(cli.positive_integer)
    p:flag("--show", "Print the stored calibration of this device instead of measuring.")
    p:flag("--json", "Print one JSON object.")
  end,
  run = function(args)
    local dev = kreach.require_device("kreach calibrate")
    local db, err = store.open(args.db)
    if not db then errors.database(err) end
    local cal
    if args.show then
      cal = db:calibration(dev.uuid)
      if not cal then
        db:close()
        errors.failed("no calibration of %s in %s", dev.uuid, args.db)
      end
    else
      local opts = {}
      if args.gemm_n then opts.gemm_n = math.tointeger(args.gemm_n) end
      if args.repeats then opts.repeats = math.tointeger(args.repeats) end
      cal = calibrate.measure(opts)
      cal.id = db:save_calibration(cal)
    end
    db:close()
    if args.json then
      io.write(json.encode(cal), "\n")
    else
      io.write(calibrate.report(cal), "\n")
      if not args.show then io.write(("stored in %s\n"):format(args.db)) end
    end
    return 0
  end,
}
