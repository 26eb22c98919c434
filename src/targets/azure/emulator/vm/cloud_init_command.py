#!/usr/bin/python3
"""`cloud-init` inside an emulated VM (installed as /usr/local/bin/cloud-init by vm_init.py).

Only `cloud-init status [--wait] [--long] [--format tabular|json|yaml]` and `--version` are
emulated. `status` reads the files the boot writes where cloud-init writes them
(/run/cloud-init/status.json, result.json, enabled) and answers as cloud-init's cmd/status.py
does: status not started / running / done / error, extended_status ("error - done",
"degraded done"), exit code 1 for an error, 2 for recoverable errors (warnings), else 0;
`--wait` prints a dot every 0.25 s until cloud-init is no longer running.
"""

import argparse
import datetime
import json
import os
import sys
import time

VERSION = "24.4.1 (latlab emulator)"
# Overridable for latlab's unit tests of this script only.
RUN_DIR = os.environ.get("LATLAB_CLOUD_INIT_RUN_DIR", "/run/cloud-init")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def details():
    status_file = os.path.join(RUN_DIR, "status.json")
    result_file = os.path.join(RUN_DIR, "result.json")
    if os.path.exists(os.path.join(RUN_DIR, "enabled")):
        boot_code, boot_description = "enabled-by-generator", "Cloud-init enabled by systemd cloud-init-generator"
    else:
        boot_code, boot_description = "unknown", "Systemd generator may not have run yet."
    v1 = (load(status_file) or {}).get("v1", {})
    ds = v1.get("datasource") or ""
    datasource = ds.partition(" ")[0].lower().replace("datasource", "") if ds else ""
    if v1.get("datasource"):
        description = v1["datasource"]
    elif v1.get("stage"):
        description = "Running in stage: %s" % v1["stage"]
    else:
        description = boot_description
    latest = 0
    for info in v1.values():
        if isinstance(info, dict):
            latest = max(latest, info.get("start") or 0, info.get("finished") or 0)
    last_update = datetime.datetime.fromtimestamp(latest, tz=datetime.timezone.utc).strftime("%a, %d %b %Y %H:%M:%S %z") if latest else ""
    errors, recoverable = [], {}
    for _key, info in sorted(v1.items()):
        if isinstance(info, dict):
            errors.extend(info.get("errors", []))
            for level, msgs in info.get("recoverable_errors", {}).items():
                recoverable.setdefault(level, []).extend(msgs)
    condition = "error" if errors else "degraded" if recoverable else "healthy"
    if os.path.exists(status_file) and not os.path.exists(result_file):
        running = "running"
    elif latest > 0:
        running = "done"
    else:
        running = "not started"
    v1 = dict(v1)
    v1.pop("datasource", None)
    return running, condition, boot_code, description, errors, recoverable, last_update, datasource, v1


def status(args):
    d = details()
    if args.wait:
        while d[0] in ("not started", "running"):
            if args.format == "tabular":
                sys.stdout.write(".")
                sys.stdout.flush()
            time.sleep(0.25)
            d = details()
    running, condition, boot_code, description, errors, recoverable, last_update, datasource, v1 = d
    if condition == "error":
        state, extended = "error", "error - %s" % running
    elif condition == "degraded" and running in ("done", "running"):
        state, extended = running, "degraded %s" % running
    else:
        state, extended = running, running
    out = {
        "datasource": datasource,
        "boot_status_code": boot_code,
        "status": state,
        "extended_status": extended,
        "detail": description,
        "errors": errors,
        "recoverable_errors": recoverable,
        "last_update": last_update,
    }
    out.update(v1)
    if args.format == "tabular":
        print("status: %s" % state)
        if args.long:
            print("extended_status: %s" % extended)
            print("boot_status_code: %s" % boot_code)
            if last_update:
                print("last_update: %s" % last_update)
            print("detail: %s" % description)
            print("errors:" + (("\n\t- " + "\n\t- ".join(errors)) if errors else " []"))
            if recoverable:
                print("recoverable_errors:\n" + "\n".join("%s:\n\t- " % k + "\n\t- ".join(m.replace("\n", " ") for m in v) for k, v in recoverable.items()))
            else:
                print("recoverable_errors: {}")
    elif args.format == "json":
        print(json.dumps(out, indent=2, sort_keys=True, separators=(",", ": ")))
    else:
        # YAML: JSON is valid YAML (cloud-init's safeyaml prints block style; the data is the same).
        print(json.dumps(out, indent=2, sort_keys=True))
    if condition == "error":
        return 1
    if condition == "degraded":
        return 2
    return 0


def main(argv):
    if argv[:1] in (["--version"], ["-v"]):
        print("%s %s" % (sys.argv[0], VERSION))
        return 0
    if argv[:1] != ["status"]:
        print("cloud-init (latlab emulator): `cloud-init %s` is not emulated; only `cloud-init status` is" % " ".join(argv), file=sys.stderr)
        return 1
    parser = argparse.ArgumentParser(prog="cloud-init status", description="Report run status of cloud init (latlab emulator)")
    parser.add_argument("--format", choices=["json", "tabular", "yaml"], default="tabular")
    parser.add_argument("-l", "--long", action="store_true")
    parser.add_argument("-w", "--wait", action="store_true")
    return status(parser.parse_args(argv[1:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
