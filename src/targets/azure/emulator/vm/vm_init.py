#!/usr/bin/python3
"""The "init" of one emulated Azure VM: runs inside the VM's network namespace, in a mount, a UTS
and a PID namespace of its own (`ip netns exec <ns> unshare --mount --uts --pid --fork …`), and
lives as long as the VM. As PID 1 it forks: the child boots the VM, PID 1 only reaps (pid1()).

It executes a boot script compiled by bootScript.ts (JSON, argv[1]; deleted once read, as it holds
the VM's private host keys): it makes the VM's own view of the machine (overlays and tmpfs, all in
this mount namespace, so they vanish with the VM's last process), sets the hostname, serves IMDS,
runs cloud-init's stages module by module, starts sshd, then waits. It decides nothing about
cloud-config: every file, mode and command comes from the script.

Progress goes to <stateDir>/events.jsonl (one JSON object a line) for bootVm.ts: {"event":
"sshd", ...} once sshd accepts connections, {"event": "fatal", ...} when the VM cannot boot.
cloud-init's own records are kept where cloud-init keeps them, inside the VM:
/var/log/cloud-init-output.log, /var/lib/cloud/data/status.json (+ /run/cloud-init/ links).
Python 3.8+, standard library only (it runs with the machine's /usr/bin/python3).
"""

import base64
import datetime
import glob
import grp
import json
import os
import pwd
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import imds  # noqa: E402  (next to this file)

T0 = time.monotonic()


def uptime():
    """The VM's uptime: seconds since this init started (what cloud-init's util.uptime() reads on a VM)."""
    return time.monotonic() - T0 + 0.5


def rfc2822(t=None):
    return datetime.datetime.fromtimestamp(t if t is not None else time.time(), tz=datetime.timezone.utc).strftime(
        "%a, %d %b %Y %H:%M:%S %z"
    )


class ProcessExecutionError(IOError):
    """cloud-init's name for a failed command (its message format too)."""

    def __init__(self, argv, code, stdout="", stderr=""):
        self.exit_code = code
        message = "Unexpected error while running command.\nCommand: %s\nExit code: %s\nReason: -\nStdout: %s\nStderr: %s" % (
            argv,
            code,
            stdout.strip(),
            stderr.strip(),
        )
        IOError.__init__(self, message)


class PackageInstallerError(Exception):
    pass


def drop_from_dpkg_status(path, names):
    """Removes the stanzas of `names` from a dpkg status file (the VM's overlaid copy): dpkg-query
    inside the VM then finds them not installed, as on an image that never had them."""
    if not os.path.exists(path):
        return
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    drop = set(names)
    kept = []
    for stanza in text.split("\n\n"):
        first = stanza.lstrip("\n").split("\n", 1)[0]
        if first.startswith("Package: ") and first[len("Package: "):].strip() in drop:
            continue
        kept.append(stanza)
    out = "\n\n".join(kept)
    if out != text:
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(out)


class Fatal(Exception):
    """The VM cannot boot (the emulator's own set-up failed)."""


class Vm:
    def __init__(self, script):
        self.s = script
        files = script["files"]
        # Opened before the VM's mounts: the state folder may be hidden (e.g. under /tmp) afterwards.
        self.events = open(files["events"], "a", buffering=1)
        self.copy_fd = os.open(files["logCopy"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.state_dir_fd = os.open(os.path.dirname(files["statusCopy"]), os.O_RDONLY | os.O_DIRECTORY)
        self.status_copy_name = os.path.basename(files["statusCopy"])
        self.imds_log = open(files["imdsLog"], "a", buffering=1)
        self.sshd_log_fd = os.open(files["sshdLog"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with open(os.path.join(HERE, "cloud_init_command.py"), "rb") as f:
            self.command_text = f.read()
        self.vm_log_fd = None
        # Everything the VM's cloud-init prints goes through one pipe, copied to both logs by one
        # thread: children write to it directly, so a daemon a runcmd leaves behind holding it
        # open never blocks the boot (cloud-init's own `| tee -a` output works the same way).
        self.out_r, self.out_w = os.pipe()
        self.lock = threading.Lock()
        self.env = dict(script["env"])
        self.status = {
            "v1": {
                "datasource": None,
                "init": self.nullstatus(),
                "init-local": self.nullstatus(),
                "modules-config": self.nullstatus(),
                "modules-final": self.nullstatus(),
                "stage": None,
            }
        }
        self.sshd = None

    @staticmethod
    def nullstatus():
        return {"errors": [], "recoverable_errors": {}, "start": None, "finished": None}

    # --- output -------------------------------------------------------------------------------

    def event(self, name, **fields):
        fields["event"] = name
        fields["uptime"] = round(uptime(), 3)
        self.events.write(json.dumps(fields) + "\n")

    def tee(self):
        while True:
            chunk = os.read(self.out_r, 65536)
            if not chunk:
                return
            for fd in (self.vm_log_fd, self.copy_fd):
                if fd is not None:
                    try:
                        os.write(fd, chunk)
                    except OSError:
                        pass

    def say(self, text):
        with self.lock:
            os.write(self.out_w, (text.rstrip("\n") + "\n").encode("utf-8", "replace"))

    # --- the VM's own view of the machine -----------------------------------------------------

    def sh(self, argv, what):
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=self.env, cwd="/")
        if r.returncode != 0:
            raise Fatal("%s: `%s` exited with %d: %s" % (what, " ".join(argv), r.returncode, r.stdout.decode("utf-8", "replace").strip()))

    def mounts(self):
        s = self.s
        scratch = s["scratchDir"]
        self.sh(["mount", "-t", "tmpfs", "-o", "mode=0700", "latlab-vm", scratch], "scratch tmpfs for the VM's upper layers")
        for d in s["overlays"]:
            name = d.strip("/").replace("/", "_")
            upper, work = os.path.join(scratch, name, "upper"), os.path.join(scratch, name, "work")
            os.makedirs(upper)
            os.makedirs(work)
            st = os.stat(d)
            os.chmod(upper, st.st_mode & 0o7777)
            os.chown(upper, st.st_uid, st.st_gid)
            self.sh(
                ["mount", "-t", "overlay", "latlab-vm-" + name, "-o", "lowerdir=%s,upperdir=%s,workdir=%s" % (d, upper, work), d],
                "overlay on " + d,
            )
        for t in s["tmpfs"]:
            self.sh(["mount", "-t", "tmpfs", "-o", "mode=" + t["mode"], "latlab-vm", t["path"]], "tmpfs on " + t["path"])
        # The kernel is the machine's: a VM may set its own network's sysctls (its namespace's),
        # nothing else (a runcmd `sysctl --system` must not rewrite the machine's kernel.*).
        self.sh(["mount", "--bind", "/proc/sys/net", "/proc/sys/net"], "keeping /proc/sys/net writable")
        self.sh(["mount", "--rbind", "/proc/sys", "/proc/sys"], "binding /proc/sys")
        self.sh(["mount", "-o", "remount,bind,ro", "/proc/sys"], "making /proc/sys read-only")

    def open_vm_log(self):
        os.makedirs("/var/log", exist_ok=True)
        self.vm_log_fd = os.open("/var/log/cloud-init-output.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
        try:
            os.chown("/var/log/cloud-init-output.log", 0, grp.getgrnam("adm").gr_gid)
        except KeyError:
            pass

    def install_command(self):
        path = "/usr/local/bin/cloud-init"
        with open(path, "wb") as f:
            f.write(self.command_text)
        os.chmod(path, 0o755)

    def start_imds(self):
        docs = self.s["imds"]["documents"]
        log = self.imds_log

        def log_line(text):
            try:
                log.write(text + "\n")
            except (OSError, ValueError):
                pass

        server = imds.make_server(self.s["imds"]["address"], self.s["imds"]["port"], docs, log_line)
        threading.Thread(target=server.serve_forever, name="imds", daemon=True).start()

    # --- status.json, as cloud-init's status_wrapper keeps it ---------------------------------

    def write_status(self, result=False):
        os.makedirs("/var/lib/cloud/data", exist_ok=True)
        data = json.dumps(self.status, indent=1, sort_keys=True)
        self.atomic("/var/lib/cloud/data/status.json", data)
        self.link("/var/lib/cloud/data/status.json", "/run/cloud-init/status.json")
        if result:
            v1 = self.status["v1"]
            errors = []
            for m in v1.values():
                if isinstance(m, dict):
                    errors.extend(m.get("errors", []))
            self.atomic("/var/lib/cloud/data/result.json", json.dumps({"v1": {"datasource": v1["datasource"], "errors": errors}}, indent=1, sort_keys=True))
            self.link("/var/lib/cloud/data/result.json", "/run/cloud-init/result.json")
        tmp = self.status_copy_name + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600, dir_fd=self.state_dir_fd)
        with os.fdopen(fd, "w") as f:
            f.write(json.dumps({"status": self.status, "result": result}, sort_keys=True))
        os.rename(tmp, self.status_copy_name, src_dir_fd=self.state_dir_fd, dst_dir_fd=self.state_dir_fd)

    @staticmethod
    def atomic(path, text):
        d = os.path.dirname(path)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)

    @staticmethod
    def link(target, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        rel = os.path.relpath(target, os.path.dirname(path))
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(rel, path)

    def warn(self, stage, message):
        self.say("%s - WARNING: %s" % (rfc2822(), message))
        rec = self.status["v1"][stage]["recoverable_errors"]
        rec.setdefault("WARNING", []).append(message)

    # --- steps ----------------------------------------------------------------------------------

    def run_cmd(self, argv, capture=False, env=None, stdin=None):
        e = dict(self.env)
        if env:
            e.update(env)
        if capture:
            r = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e, cwd="/")
            return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.out_w, stderr=self.out_w, env=e, cwd="/")
        except OSError as err:
            self.say("%s: %s" % (argv[0], err))
            return 127, "", str(err)
        return p.wait(), "", ""

    @staticmethod
    def ids(user, group):
        uid = pwd.getpwnam(user).pw_uid if user else -1
        gid = grp.getgrnam(group).gr_gid if group else -1
        return uid, gid

    def step(self, stage, st):
        op = st["op"]
        if op == "note":
            self.say(st["message"])
        elif op == "warn":
            self.warn(stage, st["message"])
        elif op == "hostname":
            socket.sethostname(st["name"])
            if st["writeEtcHostname"]:
                with open("/etc/hostname", "w") as f:
                    f.write(st["name"] + "\n")
        elif op == "mkdir":
            os.makedirs(st["path"], exist_ok=True)
            os.chmod(st["path"], st["mode"])
        elif op == "symlink":
            if os.path.lexists(st["path"]):
                os.unlink(st["path"])
            os.symlink(st["target"], st["path"])
        elif op == "write":
            self.write(st)
        elif op == "removeGlob":
            for f in glob.glob(st["pattern"]):
                try:
                    os.unlink(f)
                except OSError:
                    self.warn(stage, "Failed deleting key file %s" % f)
        elif op == "run":
            if st.get("unlessExists") and os.path.exists(st["unlessExists"]):
                return
            code, _, _ = self.run_cmd(st["argv"])
            if code != 0:
                if st["onFail"] == "raise":
                    raise ProcessExecutionError(st["argv"], code)
                self.warn(stage, st["what"])
        elif op == "createGroup":
            self.create_group(stage, st["name"], st["members"])
        elif op == "createUser":
            self.create_user(stage, st)
        elif op == "ensureSudoDir":
            self.ensure_sudo_dir(st["dir"])
        elif op == "authorizedKeys":
            self.authorized_keys(st["user"], st["keys"], st["options"])
        elif op == "derivePublicKey":
            code, out, err = self.run_cmd(["ssh-keygen", "-yf", st["privatePath"]], capture=True)
            if code != 0:
                self.warn(stage, "Failed generating a key for %s from %s" % (st["publicPath"], st["privatePath"]))
            else:
                with open(st["publicPath"], "w") as f:
                    f.write(out.strip() + " root@localhost\n")
        elif op == "packages":
            self.packages(stage, st)
        elif op == "shellScript":
            os.makedirs("/run/cloud-init/tmp", exist_ok=True)
            fd, path = tempfile.mkstemp(dir="/run/cloud-init/tmp")
            with os.fdopen(fd, "w") as f:
                f.write(st["content"])
            try:
                code, _, _ = self.run_cmd(["/bin/sh", path], env=st["env"])
            finally:
                os.unlink(path)
            if code != 0:
                raise ProcessExecutionError(["/bin/sh", path], code)
        elif op == "runparts":
            self.runparts(st["dir"])
        elif op == "finalMessage":
            self.final_message(st["template"])
        else:
            raise Fatal("unknown boot step %r" % op)

    def write(self, st):
        path = st["path"]
        parent = os.path.dirname(path)
        created = []
        p = parent
        while not os.path.isdir(p):
            created.append(p)
            p = os.path.dirname(p)
        os.makedirs(parent, exist_ok=True)
        with open(path, "ab" if st["append"] else "wb") as f:
            f.write(base64.b64decode(st["data"]))
        os.chmod(path, st["mode"])
        if st["user"] or st["group"]:
            uid, gid = self.ids(st["user"], st["group"])
            for d in created:
                os.chown(d, uid, gid)
            os.chown(path, uid, gid)
            # chown clears setuid/setgid bits: put the asked mode back, as cloud-init does.
            os.chmod(path, st["mode"])

    def create_group(self, stage, name, members):
        try:
            grp.getgrnam(name)
            self.say("Skipping creation of existing group '%s'" % name)
        except KeyError:
            code, out, err = self.run_cmd(["groupadd", name], capture=True)
            if code != 0:
                self.warn(stage, "Failed to create group %s" % name)
        for m in members:
            try:
                pwd.getpwnam(m)
            except KeyError:
                self.warn(stage, "Unable to add group member '%s' to group '%s'; user does not exist." % (m, name))
                continue
            self.run_cmd(["usermod", "-a", "-G", name, m], capture=True)

    def create_user(self, stage, st):
        name = st["name"]
        try:
            pwd.getpwnam(name)
            self.say("User %s already exists, skipping." % name)
        except KeyError:
            for g in st["groups"]:
                try:
                    grp.getgrnam(g)
                except KeyError:
                    code, _, err = self.run_cmd(["groupadd", g], capture=True)
                    if code != 0:
                        self.warn(stage, "Failed to create group %s" % g)
            code, out, err = self.run_cmd(st["useradd"], capture=True)
            if code != 0:
                self.warn(stage, "Failed to create user %s" % name)
                raise ProcessExecutionError(st["useradd"], code, out, err)
        if st["lockPasswd"]:
            code, out, err = self.run_cmd(["passwd", "-l", name], capture=True)
            if code != 0:
                self.warn(stage, "Failed to disable password for user %s" % name)
                raise ProcessExecutionError(["passwd", "-l", name], code, out, err)

    def ensure_sudo_dir(self, path):
        base = "/etc/sudoers"
        text = ""
        if os.path.exists(base):
            with open(base) as f:
                text = f.read()
        found = False
        for line in text.splitlines():
            line = line.strip()
            for prefix in ("#includedir", "@includedir"):
                if line.startswith(prefix) and os.path.abspath(line[len(prefix):].strip() or "/nonexistent") == path:
                    found = True
        if not found:
            header = "# Added by cloud-init v. %s on %s" % (self.s["cloudInitVersion"], rfc2822())
            if not os.path.exists(base):
                with open(base, "w") as f:
                    f.write("# See sudoers(5) for more information on \"#include\" directives:\n\n%s\n#includedir %s\n" % (header, path))
                os.chmod(base, 0o440)
            else:
                with open(base, "a") as f:
                    f.write("\n%s\n#includedir %s\n" % (header, path))
        os.makedirs(path, exist_ok=True)
        os.chmod(path, 0o750)

    @staticmethod
    def key_base64(line):
        """The base64 field of an authorized_keys line (after any options), or None."""
        words = line.split()
        for i, w in enumerate(words[:-1]):
            if w.startswith(("ssh-", "ecdsa-", "sk-")):
                return words[i + 1]
        return None

    def authorized_keys(self, user, keys, options):
        pw = pwd.getpwnam(user)
        ssh_dir = os.path.join(pw.pw_dir, ".ssh")
        path = os.path.join(ssh_dir, "authorized_keys")
        if not os.path.isdir(ssh_dir):
            os.makedirs(ssh_dir, mode=0o700, exist_ok=True)
            os.chown(ssh_dir, pw.pw_uid, pw.pw_gid)
        if not os.path.exists(path):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
            os.close(fd)
            os.chown(path, pw.pw_uid, pw.pw_gid)
        with open(path) as f:
            old = f.read().splitlines()
        new = []
        seen = set()
        for k in keys:
            k = k.strip()
            if not k or k in seen:
                continue
            seen.add(k)
            new.append((options + " " + k) if options else k)
        to_add = list(new)
        out = []
        for line in old:
            b = self.key_base64(line)
            for n in new:
                if b is not None and self.key_base64(n) == b:
                    line = n
                    if n in to_add:
                        to_add.remove(n)
            out.append(line)
        out.extend(to_add)
        mode = os.stat(path).st_mode & 0o7777
        with open(path, "w") as f:
            f.write("\n".join(out + [""]))
        os.chmod(path, mode)

    def packages(self, stage, st):
        """cloud-init's package_update_upgrade_install, checked against the image's package list
        (st["image"]), never installed: apt on the image installs what its archive has and cannot
        locate the rest, which then fails the module (PackageInstallerError, cloud-init's text). A
        package the image lacks is also dropped from the VM's own dpkg database, so that the VM does
        not show it installed (the machine's /usr/bin still holds its files). A package the image
        has runs from this machine's installation, which must exist."""
        self.say("latlab emulator: packages are checked against %s, not installed; the VM runs this machine's own installation of each" % st["image"])
        failed = []
        absent = []
        for p in st["packages"]:
            name, version, image = p["name"], p.get("version"), p.get("image")
            if p["manager"] == "snap":
                self.say("error: snap %r: snaps are not emulated" % name)
                failed.append(name)
                continue
            if image is None:
                self.say("E: Unable to locate package %s" % name)
                self.say("latlab emulator: %s is not in the image's package list (%s); if Ubuntu 24.04 has it, add it with its page" % (name, st["listFile"]))
                failed.append(name)
                absent.append(name)
                continue
            if version is not None and version not in image["versions"]:
                self.say("E: Version '%s' for '%s' was not found" % (version, name))
                failed.append(name)
                absent.append(name)
                continue
            code, out, _ = self.run_cmd(["dpkg-query", "-W", "-f=${Status}\t${Version}", name], capture=True)
            status, _, installed = out.partition("\t")
            if code != 0 or status.strip() != "install ok installed":
                self.say(
                    "latlab emulator: %s %s is in the image (%s) but not installed on this machine, whose programs the emulated VM runs (apt-get install %s)"
                    % (name, version or image["candidate"], image["component"], name)
                )
                failed.append(name)
                continue
            self.say("Setting up %s (%s) ... [latlab emulator: this machine's %s %s]" % (name, version or image["candidate"], name, installed.strip()))
        if absent:
            drop_from_dpkg_status(st["dpkgStatus"], absent)
        if failed:
            self.warn(stage, "Failure when attempting to install packages: %s" % [p["name"] for p in st["packages"]])
            self.warn(stage, "1 failed with exceptions, re-raising the last one")
            raise PackageInstallerError(
                "Failed to install the following packages: {%s}. See associated package manager logs for more details."
                % ", ".join(repr(n) for n in sorted(set(failed)))
            )

    def runparts(self, d):
        if not os.path.isdir(d):
            return
        failed, attempted = [], []
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                attempted.append(path)
                code, _, _ = self.run_cmd([path])
                if code != 0:
                    failed.append(name)
        if failed and attempted:
            self.say("%s - WARNING: Failed to run module scripts_user (scripts in %s)" % (rfc2822(), d))
            raise RuntimeError("Runparts: %d failures (%s) in %d attempted commands" % (len(failed), ",".join(failed), len(attempted)))

    def final_message(self, template):
        up = "%.2f" % uptime()
        subs = {"uptime": up, "timestamp": rfc2822(), "version": self.s["cloudInitVersion"], "datasource": self.s["datasource"]}
        msg = template.strip() or "Cloud-init v. {{version}} finished at {{timestamp}}. Datasource {{datasource}}.  Up {{uptime}} seconds"
        if msg.startswith("## template: jinja\n"):
            msg = msg.split("\n", 1)[1]
        for k, v in subs.items():
            for form in ("{{%s}}" % k, "{{ %s }}" % k, "${%s}" % k, "$%s" % k, "{{%s}}" % k.upper(), "{{ %s }}" % k.upper(), "${%s}" % k.upper(), "$%s" % k.upper()):
                msg = msg.replace(form, v)
        self.say(msg)
        with open("/var/lib/cloud/instance/boot-finished", "w") as f:
            f.write("%s - %s - v. %s\n" % (up, subs["timestamp"], subs["version"]))

    # --- stages and services --------------------------------------------------------------------

    def stage(self, name, modules):
        v1 = self.status["v1"]
        v1["stage"] = name
        v1[name]["start"] = uptime()
        self.write_status()
        action = {"modules-config": "modules:config", "modules-final": "modules:final"}.get(name, name)
        self.say("Cloud-init v. %s running '%s' at %s. Up %.2f seconds." % (self.s["cloudInitVersion"], action, rfc2822(), uptime()))
        if name == "init-local":
            v1["datasource"] = self.s["datasource"]
        for m in modules:
            try:
                for st in m["steps"]:
                    self.step(name, st)
            except Fatal:
                raise
            except Exception as e:  # a module failure: recorded, the boot goes on (as cloud-init does)
                self.warn(
                    name,
                    "Running module %s (<module 'cloudinit.config.cc_%s' from '/usr/lib/python3/dist-packages/cloudinit/config/cc_%s.py'>) failed"
                    % (m["name"], m["name"], m["name"]),
                )
                v1[name]["errors"].append(str((m["name"], e)))
                self.say("%s" % e)
        v1[name]["finished"] = uptime()
        v1["stage"] = None
        self.write_status(result=(name == "modules-final"))
        self.event("stage", stage=name, errors=len(v1[name]["errors"]))

    def host_keys(self):
        code, out, _ = self.run_cmd(["/usr/sbin/sshd", "-T"], capture=True)
        keys = []
        for line in out.splitlines():
            k, _, v = line.partition(" ")
            if k.lower() == "hostkey" and os.path.exists(v + ".pub"):
                with open(v + ".pub") as f:
                    keys.append(" ".join(f.read().split()[:2]))
        return keys

    def start_sshd(self):
        os.makedirs("/run/sshd", exist_ok=True)
        os.chmod("/run/sshd", 0o755)
        code, out, err = self.run_cmd(["/usr/sbin/sshd", "-t"], capture=True)
        if code != 0:
            raise Fatal("sshd refuses the VM's configuration (sshd -t): %s" % (err.strip() or out.strip()))
        self.say("latlab emulator: starting ssh.service (/usr/sbin/sshd -D)")
        self.sshd = subprocess.Popen(
            ["/usr/sbin/sshd", "-D", "-e"], stdin=subprocess.DEVNULL, stdout=self.sshd_log_fd, stderr=self.sshd_log_fd, env=self.env, cwd="/"
        )
        check = self.s["sshCheck"]
        deadline = time.monotonic() + 30
        while True:
            if self.sshd.poll() is not None:
                raise Fatal("sshd exited with code %s instead of starting (see sshd.log)" % self.sshd.returncode)
            if self.banner(check["address"], check["port"]):
                break
            if time.monotonic() > deadline:
                raise Fatal("sshd did not accept connections on %s:%d within 30 s" % (check["address"], check["port"]))
            time.sleep(0.05)
        self.event("sshd", pid=self.sshd.pid, hostKeys=self.host_keys())

    @staticmethod
    def banner(address, port):
        try:
            with socket.create_connection((address, port), timeout=1) as c:
                c.settimeout(1)
                data = b""
                while b"\n" not in data and len(data) < 256:
                    chunk = c.recv(256)
                    if not chunk:
                        break
                    data += chunk
                return data.startswith(b"SSH-2.0-")
        except OSError:
            return False

    def boot(self):
        s = self.s
        os.chdir("/")
        socket.sethostname(s["hostname"])
        self.mounts()
        self.open_vm_log()
        threading.Thread(target=self.tee, name="tee", daemon=True).start()
        self.install_command()
        self.start_imds()
        try:
            for st in s["platform"]:
                self.step("init-local", st)
        except Exception as e:
            raise Fatal("emulator set-up step failed: %s" % e)
        self.event("mounted")
        for entry in s["sequence"]:
            if "service" in entry:
                self.start_sshd()
            else:
                self.stage(entry["stage"], entry["modules"])
        self.event("done")


def pid1(child):
    """PID 1 of the VM's PID namespace: reaps every orphan (daemons runcmd leaves behind, SSH
    sessions' leftovers) and ends with the init, whose exit code it passes on. When it ends, the
    kernel kills whatever is left in the VM: SIGTERM to it (stopVm) stops the whole VM."""
    signal.signal(signal.SIGTERM, lambda *_: os._exit(128 + signal.SIGTERM))
    signal.signal(signal.SIGINT, lambda *_: os._exit(128 + signal.SIGINT))
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if pid == child:
            os._exit(128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))


def main():
    path = sys.argv[1]
    with open(path) as f:
        script = json.load(f)
    os.unlink(path)
    if os.getpid() == 1:
        child = os.fork()
        if child != 0:
            pid1(child)
    vm = Vm(script)
    try:
        vm.boot()
    except Exception as e:  # noqa: BLE001  (reported to bootVm, which tears the VM down)
        vm.event("fatal", message="%s: %s" % (type(e).__name__, e) if not isinstance(e, Fatal) else str(e))
        try:
            vm.say("latlab emulator: boot failed: %s" % e)
            time.sleep(0.1)
        finally:
            os._exit(1)
    # The VM lives as long as this process (and whatever else runs in its namespace).
    while True:
        if vm.sshd is not None and vm.sshd.poll() is not None:
            vm.say("latlab emulator: sshd exited with code %s" % vm.sshd.returncode)
            vm.event("sshd-exited", code=vm.sshd.returncode)
            vm.sshd = None
        time.sleep(1)


if __name__ == "__main__":
    main()
