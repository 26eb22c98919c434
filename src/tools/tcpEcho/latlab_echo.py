#!/usr/bin/env python3
"""latlab_echo: a TCP echo server (RFC 862 style) and a long-running echo client.

Shipped by latlab (tool "tcp-echo") to the hosts it measures. Standard library only,
Python >= 3.8.

  latlab_echo.py server --bind 0.0.0.0 --port 7
  latlab_echo.py client --host H --port 7 --interval 1 --payload 64 --duration 39600 \
      --out FILE.csv --pid-file FILE.pid [--connect-timeout 5] [--reply-timeout 10]

The client keeps ONE TCP connection (TCP_NODELAY) and sends a payload at fixed slots: slot k is
due k * interval after the schedule origin, on the monotonic clock, so the period never drifts
by the RTT. A probe whose echo overruns the next slot(s) makes the client skip to the first slot
still ahead (a `skip` record counts them). RTT = monotonic_ns() from the send to the last byte
of the echo. Any break (reset, EOF, no echo within --reply-timeout, unexpected bytes) is
recorded, and the client reconnects with exponential backoff (0.1 s doubling to 10 s, jittered);
probes due while there is no connection are recorded as `lost`, never as RTTs. SIGTERM/SIGINT
end the run cleanly (an `end` record; a probe in flight then is not a loss); exit status 0.

Output: one CSV line per event, each written with a single write() and so always whole, after
a header line. Every line has the same 8 columns (empty when they do not apply):

  event,seq,time,mono_ns,rtt_ns,count,outage_ms,detail

  event      start | connect | probe | skip | lost | break | reconnect | error | end
  seq        slot number k (probe, lost; skip: the first skipped slot)
  time       wall clock, ISO 8601 UTC with microseconds (lost: the slot's due time)
  mono_ns    monotonic ns since the schedule origin (probe: the send; lost: the due time)
  rtt_ns     probe: send -> whole echo back, ns
  count      connect/reconnect: connection attempts; skip: slots skipped; end: probes
  outage_ms  reconnect: ms from the break to the new connection; connect: ms spent connecting
             when the first attempt failed
  detail     free text without commas or quotes (error text, key=value pairs)
"""

import argparse
import datetime
import errno
import os
import random
import select
import selectors
import signal
import socket
import sys
import time

VERSION = "1"
HEADER = "event,seq,time,mono_ns,rtt_ns,count,outage_ms,detail"
BACKOFF_FIRST = 0.1
BACKOFF_MAX = 10.0


def iso(wall_ns):
    secs, ns = divmod(wall_ns, 1_000_000_000)
    dt = datetime.datetime.fromtimestamp(secs, tz=datetime.timezone.utc)
    return "%s.%06dZ" % (dt.strftime("%Y-%m-%dT%H:%M:%S"), ns // 1000)


def clean(text):
    """Detail text fit for an unquoted CSV field."""
    return " ".join(str(text).replace(",", ";").replace('"', "'").split())


def error_text(where, exc):
    if isinstance(exc, socket.timeout) or isinstance(exc, TimeoutError):
        return "%s: timed out" % where
    if isinstance(exc, OSError) and exc.errno is not None:
        name = errno.errorcode.get(exc.errno, str(exc.errno))
        return "%s: %s (%s)" % (where, exc.strerror or os.strerror(exc.errno), name)
    return "%s: %s" % (where, exc)


def log(message):
    print("%s latlab_echo: %s" % (iso(time.time_ns()), message), file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------- server


def serve(bind, port):
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((bind, port))
    listener.listen(128)
    listener.setblocking(False)

    def stop(signum, frame):
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, None)
    pending = {}  # socket -> bytearray not yet echoed
    high_water = 1 << 20
    log("echo server %s listening on %s port %d" % (VERSION, bind, port))

    def close(sock, why):
        try:
            sel.unregister(sock)
        except (KeyError, ValueError):
            pass
        pending.pop(sock, None)
        try:
            peer = "%s:%s" % sock.getpeername()[:2]
        except OSError:
            peer = "?"
        sock.close()
        log("closed %s (%s)" % (peer, why))

    def update(sock):
        events = selectors.EVENT_WRITE if pending[sock] else 0
        if len(pending[sock]) < high_water:
            events |= selectors.EVENT_READ
        sel.modify(sock, events, "client")

    try:
        while True:
            for key, mask in sel.select(timeout=5.0):
                sock = key.fileobj
                if key.data is None:
                    try:
                        conn, addr = listener.accept()
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError as e:  # EMFILE and the like: keep serving the others
                        log(error_text("accept", e))
                        time.sleep(0.1)
                        continue
                    conn.setblocking(False)
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    pending[conn] = bytearray()
                    sel.register(conn, selectors.EVENT_READ, "client")
                    log("accepted %s:%s" % addr[:2])
                    continue
                try:
                    if mask & selectors.EVENT_READ:
                        data = sock.recv(65536)
                        if not data:
                            close(sock, "EOF")
                            continue
                        pending[sock] += data
                    if pending[sock]:
                        sent = sock.send(pending[sock])
                        del pending[sock][:sent]
                    update(sock)
                except (BlockingIOError, InterruptedError):
                    update(sock)
                except Exception as e:  # one client's trouble never stops the server
                    close(sock, error_text("io", e))
    except SystemExit:
        log("stopping")
        return 0


# ---------------------------------------------------------------------------------- client


class Client:
    def __init__(self, args):
        self.host = args.host
        self.port = args.port
        self.interval_ns = int(round(args.interval * 1e9))
        self.payload_len = args.payload
        self.duration_ns = int(round(args.duration * 1e9))
        self.connect_timeout = args.connect_timeout
        self.reply_timeout_ns = int(round(args.reply_timeout * 1e9))
        self.reply_timeout = args.reply_timeout
        self.args = args
        self.pattern = bytes(range(256)) * (self.payload_len // 256 + 2)
        self.sock = None
        self.stop_signal = None
        self.k = 0
        self.t0 = None
        self.wall0 = None
        self.end = None
        self.counts = {"probes": 0, "lost": 0, "breaks": 0, "reconnects": 0, "skipped": 0}
        self.discarded = 0

    # -- output

    def open_files(self):
        tmp = self.args.pid_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % os.getpid())
        os.replace(tmp, self.args.pid_file)
        self.out = os.open(self.args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        self.write_line(HEADER)

    def write_line(self, line):
        data = (line + "\n").encode("utf-8")
        while data:
            n = os.write(self.out, data)
            data = data[n:]

    def emit(self, event, seq="", wall_ns=None, mono_ns=None, rtt_ns="", count="", outage_ms="", detail=""):
        if wall_ns is None:
            wall_ns = time.time_ns()
        if mono_ns is None:
            mono_ns = time.monotonic_ns() - self.t0 if self.t0 is not None else ""
        fields = [event, seq, iso(wall_ns), mono_ns, rtt_ns, count, outage_ms, clean(detail)]
        self.write_line(",".join(str(f) for f in fields))

    def slot_wall(self, due):
        return self.wall0 + (due - self.t0)

    # -- signals: the handler only sets a flag; the wakeup fd makes every select() return

    def install_signals(self):
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)

        def on_signal(signum, frame):
            self.stop_signal = signal.Signals(signum).name

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)

    def drain_wake(self):
        try:
            while os.read(self.wake_r, 512):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    def select(self, rlist, wlist, timeout):
        r, w, _ = select.select(rlist + [self.wake_r], wlist, [], max(0.0, timeout))
        if self.wake_r in r:
            self.drain_wake()
            r = [x for x in r if x is not self.wake_r]
        return r, w

    # -- connection

    def try_connect(self, timeout):
        """A connected non-blocking socket, or None when stopped; raises OSError on failure."""
        last = None
        for family, kind, proto, _, addr in socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM):
            s = socket.socket(family, kind, proto)
            try:
                s.setblocking(False)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                err = s.connect_ex(addr)
                if err == errno.EINPROGRESS:
                    _, w = self.select([], [s], timeout)
                    if self.stop_signal:
                        s.close()
                        return None
                    if not w:
                        raise socket.timeout("timed out")
                    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    raise OSError(err, os.strerror(err))
                return s
            except OSError as e:
                s.close()
                last = e
        raise last if last else OSError("no address for %s" % self.host)

    def describe_sock(self, connect_ns):
        try:
            local = "%s:%s" % self.sock.getsockname()[:2]
            remote = "%s:%s" % self.sock.getpeername()[:2]
        except OSError:
            local = remote = "?"
        return "local=%s remote=%s connect_us=%.1f" % (local, remote, connect_ns / 1000)

    def mark_lost(self, until, why):
        """Records as lost every slot due at or before `until` (and before the end)."""
        while True:
            due = self.t0 + self.k * self.interval_ns
            if due > until or due >= self.end:
                return
            self.emit("lost", self.k, self.slot_wall(due), due - self.t0, detail=why)
            self.counts["lost"] += 1
            self.k += 1

    def connect_loop(self, first_error, since):
        """Connects (with backoff) until it works, the run ends or a signal stops it.

        first_error: the break text (a reconnect) or None (the first connection, whose first
        attempt already failed with `since` as the origin).
        """
        attempts = 1 if first_error is None else 0
        delay = 0.0 if first_error is not None else BACKOFF_FIRST
        while True:
            now = time.monotonic_ns()
            self.mark_lost(now, "no connection")
            if self.stop_signal or now >= self.end:
                return False
            if delay:
                self.select([], [], min(delay, (self.end - now) / 1e9))
                if self.stop_signal:
                    return False
                now = time.monotonic_ns()
                self.mark_lost(now, "no connection")
                if now >= self.end:
                    return False
            attempts += 1
            started = time.monotonic_ns()
            try:
                sock = self.try_connect(min(self.connect_timeout, max(0.001, (self.end - now) / 1e9)))
            except OSError as e:
                delay = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (attempts - 1)) * random.uniform(0.5, 1.0)
                continue
            if sock is None:
                return False
            self.sock = sock
            connected = time.monotonic_ns()
            outage_ms = "%.3f" % ((connected - since) / 1e6)
            detail = self.describe_sock(connected - started)
            if first_error is None:
                self.emit("connect", count=attempts, outage_ms=outage_ms, detail=detail)
            else:
                self.emit("reconnect", count=attempts, outage_ms=outage_ms, detail=detail)
                self.counts["reconnects"] += 1
            # Slots that came due while connecting are lost; the next one ahead is sent.
            self.mark_lost(connected - 1, "no connection")
            return True

    def broke(self, text):
        """The connection broke: record it, drop it, reconnect."""
        self.emit("break", detail=text)
        self.counts["breaks"] += 1
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.connect_loop(text, time.monotonic_ns())

    # -- probing

    def wait_until(self, due):
        """Sleeps until `due`, watching the idle connection. False when it broke or a signal came."""
        while True:
            now = time.monotonic_ns()
            if now >= due:
                return True
            r, _ = self.select([self.sock], [], (due - now) / 1e9)
            if self.stop_signal:
                return False
            if r:
                try:
                    data = self.sock.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as e:
                    self.broke(error_text("recv", e))
                    return False
                if not data:
                    self.broke("recv: connection closed by the server (EOF)")
                else:
                    self.broke("recv: %d unexpected bytes from the server between probes" % len(data))
                return False

    def probe(self, k, due):
        payload = self.pattern[k % 256 : k % 256 + self.payload_len]
        wall = time.time_ns()
        sent_at = time.monotonic_ns()
        deadline = sent_at + self.reply_timeout_ns

        def lose(text):
            self.emit("lost", k, wall, sent_at - self.t0, detail="in flight: " + text)
            self.counts["lost"] += 1
            self.k = k + 1
            self.broke(text)

        view = memoryview(payload)
        try:
            while view:
                try:
                    n = self.sock.send(view)
                    view = view[n:]
                except (BlockingIOError, InterruptedError):
                    now = time.monotonic_ns()
                    if now >= deadline:
                        return lose("send: timed out after %g s" % self.reply_timeout)
                    self.select([], [self.sock], (deadline - now) / 1e9)
                    if self.stop_signal:
                        self.discarded += 1
                        return
        except OSError as e:
            return lose(error_text("send", e))

        got = bytearray()
        while len(got) < len(payload):
            now = time.monotonic_ns()
            if now >= deadline:
                return lose("timeout: no echo within %g s" % self.reply_timeout)
            r, _ = self.select([self.sock], [], (deadline - now) / 1e9)
            if self.stop_signal:
                self.discarded += 1
                return
            if not r:
                continue
            try:
                data = self.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError as e:
                return lose(error_text("recv", e))
            if not data:
                return lose("recv: connection closed by the server (EOF)")
            got += data
        received_at = time.monotonic_ns()
        if bytes(got) != payload:
            return lose("echo did not match the payload sent (%d bytes back)" % len(got))
        self.emit("probe", k, wall, sent_at - self.t0, received_at - sent_at)
        self.counts["probes"] += 1
        # Next slot: the first one not yet due (skipping any the echo overran).
        nxt = k + 1
        ahead = -(-(received_at - self.t0) // self.interval_ns)
        if ahead > nxt:
            self.emit("skip", nxt, count=ahead - nxt, detail="echo took %.3f ms" % ((received_at - sent_at) / 1e6))
            self.counts["skipped"] += ahead - nxt
            nxt = ahead
        self.k = nxt

    def run(self):
        self.install_signals()
        self.open_files()
        # The first attempt fixes the schedule origin: slot 0 is sent as soon as it is connected.
        first_error = None
        started = time.monotonic_ns()
        try:
            sock = self.try_connect(self.connect_timeout)
        except OSError as e:
            sock = None
            first_error = error_text("connect", e)
        self.t0 = time.monotonic_ns()
        self.wall0 = time.time_ns()
        self.end = self.t0 + self.duration_ns
        a = self.args
        self.emit(
            "start",
            wall_ns=self.wall0,
            mono_ns=0,
            detail="version=%s host=%s port=%d interval=%g payload=%d duration=%g connect_timeout=%g reply_timeout=%g pid=%d python=%s"
            % (VERSION, a.host, a.port, a.interval, a.payload, a.duration, a.connect_timeout, a.reply_timeout, os.getpid(), sys.version.split()[0]),
        )
        if sock is not None:
            self.sock = sock
            self.emit("connect", count=1, detail=self.describe_sock(self.t0 - started))
        elif not self.stop_signal:
            self.emit("error", detail=first_error)
            self.connect_loop(None, self.t0)

        while not self.stop_signal:
            due = self.t0 + self.k * self.interval_ns
            if due >= self.end or self.sock is None:
                break
            if not self.wait_until(due):
                continue
            self.probe(self.k, due)

        if self.sock is None and self.stop_signal:
            self.mark_lost(time.monotonic_ns(), "no connection")
        reason = self.stop_signal or "duration"
        c = self.counts
        detail = "reason=%s probes=%d lost=%d breaks=%d reconnects=%d skipped=%d" % (
            reason, c["probes"], c["lost"], c["breaks"], c["reconnects"], c["skipped"])
        if self.discarded:
            detail += " in_flight_discarded=%d" % self.discarded
        self.emit("end", count=c["probes"], detail=detail)
        if self.sock is not None:
            self.sock.close()
        return 0

    def remove_pid_file(self):
        try:
            with open(self.args.pid_file) as f:
                if f.read().strip() == str(os.getpid()):
                    os.unlink(self.args.pid_file)
        except OSError:
            pass


def client(args):
    c = Client(args)
    try:
        return c.run()
    except Exception as e:
        log("client failed: %r" % (e,))
        try:
            c.emit("error", detail="latlab_echo failed: %r" % (e,))
            c.emit("end", count=c.counts["probes"], detail="reason=crash")
        except Exception:
            pass
        raise
    finally:
        c.remove_pid_file()


def positive(kind, low=None, high=None):
    def check(text):
        v = kind(text)
        if v <= 0 or (low is not None and v < low) or (high is not None and v > high):
            raise argparse.ArgumentTypeError("%s is out of range" % text)
        return v

    return check


def main(argv):
    p = argparse.ArgumentParser(prog="latlab_echo.py", description="latlab TCP echo server and long-running echo client")
    p.add_argument("--version", action="version", version="latlab_echo %s" % VERSION)
    sub = p.add_subparsers(dest="mode")
    s = sub.add_parser("server", help="echo every byte back (RFC 862), many clients at once")
    s.add_argument("--bind", default="0.0.0.0")
    s.add_argument("--port", type=positive(int, 1, 65535), default=7)
    c = sub.add_parser("client", help="one long-lived connection, a probe per interval")
    c.add_argument("--host", required=True)
    c.add_argument("--port", type=positive(int, 1, 65535), default=7)
    c.add_argument("--interval", type=positive(float, 0.001), default=1.0, help="seconds between probes")
    c.add_argument("--payload", type=positive(int, 1, 65000), default=64, help="bytes per probe")
    c.add_argument("--duration", type=positive(float), required=True, help="seconds to run")
    c.add_argument("--connect-timeout", type=positive(float), default=5.0)
    c.add_argument("--reply-timeout", type=positive(float), default=10.0, help="no echo within this many seconds = a break")
    c.add_argument("--out", required=True, help="CSV file, one line per event")
    c.add_argument("--pid-file", required=True)
    args = p.parse_args(argv)
    if args.mode == "server":
        return serve(args.bind, args.port)
    if args.mode == "client":
        return client(args)
    p.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
