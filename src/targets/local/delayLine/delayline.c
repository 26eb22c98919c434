/*
 * latlab-delayline: holds each packet of an NFQUEUE queue for a fixed one-way delay, then
 * accepts it. It is the local target's stand-in for `tc … netem delay` on kernels without
 * sch_netem (see delayLine.ts for why NFQUEUE and why C).
 *
 * Usage: latlab-delayline [--spin-us N] [--fifo PRIO] [--advance-ns N] [--no-deep-idle] [--seed N]
 *                         [--sample N [--sample-gap-us G]] QUEUE=SPEC ...
 *   QUEUE=DELAY_US   bind NFQUEUE queue QUEUE; every packet it receives is accepted DELAY_US µs
 *                    after this process read it (one queue per peer, so no packet is parsed)
 *   QUEUE=ln:FLOOR_US:SCALE_US:SIGMA
 *                    the same, each packet's delay drawn from FLOOR + SCALE·exp(SIGMA·Z), Z standard
 *                    normal (latencySpread.ts: the model's spread, one way). No packet is released
 *                    before the one its queue received ahead of it: it leaves at the later of its own
 *                    draw and its predecessor's release, as netem does with a rate (shaping.ts), so a
 *                    TCP flow is never reordered. Packets further apart than the spread keep the
 *                    drawn distribution; a train closer than that is delayed more than drawn.
 *   --seed N         seed of the draws (each queue its own stream); default: from getrandom(2)
 *   --sample N       bind nothing: print N delays (µs) of each queue, one a line, and exit — the
 *                    sampler's self-test; with --sample-gap-us G the packets arrive G µs apart and
 *                    the in-order rule applies (what a train of packets gets)
 *   --spin-us N      busy-wait the last N µs before a release instead of sleeping through it:
 *                    the timer's wake-up latency is what limits precision (default 0)
 *   --fifo PRIO      run under SCHED_FIFO at PRIO, so that a busy CPU delays the wake-up less
 *   --advance-ns N   release N ns early: the bring-up measurement's constant bias, taken back
 *   --no-deep-idle   hold a PM QoS request of 0 µs (/dev/cpu_dma_latency, as cyclictest does)
 *                    while running: a CPU waking from halt to read a queued packet is most of
 *                    the delay line's error in a VM; the request ends when the process does
 *
 *   --nfqueue-stats FILE
 *                    bind nothing: print the kernel's drop counts of the queues given, read from FILE
 *                    (the format of /proc/net/netfilter/nfnetlink_queue), and exit — the self-test
 *                    of what the summary reads at stop
 *
 * Prints "ready" on stdout once every queue is bound (the caller installs its rules after that:
 * a queue nobody listens on drops packets). On SIGTERM or SIGINT it accepts every packet it
 * holds, prints its summary on stderr (released, dropped — its own and the kernel's counts for its
 * queues —, most held at once, packets held past their draw behind the one ahead, release lateness
 * as µs histogram quantiles) and exits 0. A fatal error (a receive or poll error) ends the loop
 * the same way but says so on a line of its own after the summary and exits 1.
 * It runs inside the host's network namespace (queues are per namespace), so the local target's
 * teardown and `latlab cleanup`, which stop every process of a run's namespaces, stop it too.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_QUEUES 256
/* A few seconds of a 10 Gbit/s GSO stream at 5 ms, with room: the kernel's own limit is set to it. */
#define QUEUE_MAXLEN 65536
/* Room for four full queues: beyond that (more than four peers' queues full at once, each up to
   QUEUE_MAXLEN in the kernel) a packet is dropped here and counted as "helper full", as a full
   netem drops. A heap for all MAX_QUEUES full queues would be 512 MiB. */
#define HEAP_CAP (QUEUE_MAXLEN * 4)
#define LATE_BUCKETS 10001 /* 0..10000 µs, the last one "or more" */

struct queue {
  struct nfq_q_handle *qh;
  uint16_t num;
  int64_t delay_ns; /* the constant delay; with a spread, unused */
  int spread;       /* draw each delay: floor_ns + scale_ns·exp(sigma·Z) */
  double floor_ns, scale_ns, sigma;
  uint64_t rng[4];         /* xoshiro256** state, this queue's own stream */
  double spare_z;          /* the polar method makes normals in pairs */
  int has_spare;
  int64_t last_release_ns; /* no packet leaves before its predecessor */
};

/* splitmix64 seeds xoshiro256** (Blackman and Vigna, public domain): fast, 2^256 period. */
static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t xoshiro(uint64_t *s) {
  uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

/* Uniform on (−1, 1), never an endpoint. */
static double uniform_pm1(uint64_t *s) { return (((double)(xoshiro(s) >> 11) + 0.5) / 9007199254740992.0) * 2.0 - 1.0; }

/* A standard normal (Marsaglia's polar method: no trigonometry, exact in distribution). */
static double normal(struct queue *q) {
  if (q->has_spare) {
    q->has_spare = 0;
    return q->spare_z;
  }
  double u, v, r;
  do {
    u = uniform_pm1(q->rng);
    v = uniform_pm1(q->rng);
    r = u * u + v * v;
  } while (r >= 1.0 || r == 0.0);
  double f = sqrt(-2.0 * log(r) / r);
  q->spare_z = v * f;
  q->has_spare = 1;
  return u * f;
}

/* This packet's delay, ns. */
static int64_t draw_delay_ns(struct queue *q) {
  if (!q->spread) return q->delay_ns;
  return (int64_t)(q->floor_ns + q->scale_ns * exp(q->sigma * normal(q)));
}

static int64_t advance_ns;
/* Packets held past their own draw behind the packet ahead (the in-order rule), and the most. */
static uint64_t pushed_behind;
static int64_t pushed_max_ns;

/* When a packet that arrived at `arrival_ns` leaves: its drawn delay later, but never before the
   packet its queue received ahead of it (ties keep arrival order in the heap). */
static int64_t schedule_release(struct queue *q, int64_t arrival_ns) {
  int64_t release_ns = arrival_ns + draw_delay_ns(q) - advance_ns;
  if (release_ns < q->last_release_ns) {
    pushed_behind++;
    if (q->last_release_ns - release_ns > pushed_max_ns) pushed_max_ns = q->last_release_ns - release_ns;
    release_ns = q->last_release_ns;
  }
  q->last_release_ns = release_ns;
  return release_ns;
}

struct held {
  int64_t release_ns;
  uint64_t seq; /* keeps equal release times in arrival order */
  uint32_t id;
  struct queue *q;
};

static struct held *heap;
static size_t heap_len, heap_peak;
static uint64_t next_seq;
static int64_t now_read_ns; /* when the current batch was read */
static uint64_t released, dropped_full;
static uint64_t late_hist[LATE_BUCKETS];
static volatile sig_atomic_t stopping;

static int64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int earlier(const struct held *a, const struct held *b) {
  return a->release_ns < b->release_ns || (a->release_ns == b->release_ns && a->seq < b->seq);
}

static void heap_push(struct held h) {
  size_t i = heap_len++;
  heap[i] = h;
  if (heap_len > heap_peak) heap_peak = heap_len;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!earlier(&heap[i], &heap[p])) break;
    struct held t = heap[p];
    heap[p] = heap[i];
    heap[i] = t;
    i = p;
  }
}

static struct held heap_pop(void) {
  struct held top = heap[0];
  heap[0] = heap[--heap_len];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < heap_len && earlier(&heap[l], &heap[m])) m = l;
    if (r < heap_len && earlier(&heap[r], &heap[m])) m = r;
    if (m == i) break;
    struct held t = heap[m];
    heap[m] = heap[i];
    heap[i] = t;
    i = m;
  }
  return top;
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa, void *data) {
  (void)msg;
  struct queue *q = data;
  struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
  if (!ph) return 0;
  uint32_t id = ntohl(ph->packet_id);
  if (heap_len >= HEAP_CAP) {
    /* More than four queues' worth held (HEAP_CAP): dropping is what a full netem does. */
    nfq_set_verdict(qh, id, NF_DROP, 0, NULL);
    dropped_full++;
    return 0;
  }
  heap_push((struct held){schedule_release(q, now_read_ns), next_seq++, id, q});
  return 0;
}

static void release(struct held h, int64_t now) {
  nfq_set_verdict(h.q->qh, h.id, NF_ACCEPT, 0, NULL);
  int64_t late_us = (now - h.release_ns) / 1000;
  if (late_us < 0) late_us = 0;
  if (late_us >= LATE_BUCKETS) late_us = LATE_BUCKETS - 1;
  late_hist[late_us]++;
  released++;
}

static void release_due(void) {
  int64_t now = mono_ns();
  while (heap_len > 0 && heap[0].release_ns <= now) release(heap_pop(), now);
}

/* Reads the messages waiting on the socket, a bounded batch so that a steady stream never
   holds up the releases; returns -1 on a fatal error. */
static int drain(struct nfq_handle *h, int fd, char *buf, size_t size) {
  for (int batch = 0; batch < 64; batch++) {
    ssize_t n = recv(fd, buf, size, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
      if (errno == ENOBUFS) {
        /* Only if NETLINK_NO_ENOBUFS could not be set (main): with it, a full socket makes the
           kernel drop the packet and count it as the queue's user_dropped, which the summary
           reads at stop; without it, the same drops are also reported here. Keep going. */
        fprintf(stderr, "delayline: receive buffer overflow (ENOBUFS)\n");
        continue;
      }
      perror("delayline: recv");
      return -1;
    }
    now_read_ns = mono_ns();
    nfq_handle_packet(h, buf, (int)n);
  }
  return 0;
}

static double late_quantile(double q) {
  if (released == 0) return 0;
  uint64_t want = (uint64_t)(q * (double)(released - 1)) + 1, seen = 0;
  for (int i = 0; i < LATE_BUCKETS; i++) {
    seen += late_hist[i];
    if (seen >= want) return i;
  }
  return LATE_BUCKETS - 1;
}

/*
 * The kernel's own drops of our queues, from `path` (/proc/net/netfilter/nfnetlink_queue, one
 * line per bound queue of this namespace; kernel nfnetlink_queue.c seq_show: queue_num
 * peer_portid queue_total copy_mode copy_range queue_dropped queue_user_dropped id_sequence 1).
 * queue_dropped: the queue was at its maxlen; queue_user_dropped: the message could not be put
 * on our socket (it was full). Both packets are dropped by the kernel, never seen here. The
 * counts vanish with the queue, so this is read before unbinding. -1 when the file is unreadable.
 */
static int kernel_drops(const char *path, const struct queue *queues, size_t nq, uint64_t *queue_full, uint64_t *undelivered) {
  FILE *f = fopen(path, "re");
  if (!f) return -1;
  *queue_full = *undelivered = 0;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    unsigned num, portid, total, mode, range, qdropped, udropped;
    if (sscanf(line, "%u %u %u %u %u %u %u", &num, &portid, &total, &mode, &range, &qdropped, &udropped) != 7) continue;
    for (size_t k = 0; k < nq; k++)
      if (queues[k].num == num) {
        *queue_full += qdropped;
        *undelivered += udropped;
      }
  }
  fclose(f);
  return 0;
}

static void on_signal(int sig) {
  (void)sig;
  stopping = 1;
}

static int usage(void) {
  fprintf(stderr, "usage: latlab-delayline [--spin-us N] [--fifo PRIO] [--advance-ns N] [--no-deep-idle] [--seed N] [--sample N [--sample-gap-us G]] [--nfqueue-stats FILE] QUEUE=DELAY_US|QUEUE=ln:FLOOR_US:SCALE_US:SIGMA ...\n");
  return 2;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end || v > max || s[0] == '-') return -1;
  *out = v;
  return 0;
}

/* A finite double in [min, max] into *out, ending at `stop` (':' or the string's end); *next after it. */
static int parse_double(const char *s, double min, double max, char stop, double *out, const char **next) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end != stop || !(v >= min && v <= max)) return -1;
  *out = v;
  *next = stop ? end + 1 : end;
  return 0;
}

/* "ln:FLOOR_US:SCALE_US:SIGMA" into q; -1 when malformed. */
static int parse_spread(const char *s, struct queue *q) {
  double floor_us, scale_us, sigma;
  const char *p;
  if (strncmp(s, "ln:", 3) || parse_double(s + 3, 0, 10000000, ':', &floor_us, &p) || parse_double(p, 1e-3, 10000000, ':', &scale_us, &p) ||
      parse_double(p, 1e-6, 5, 0, &sigma, &p))
    return -1;
  q->spread = 1;
  q->floor_ns = floor_us * 1000;
  q->scale_ns = scale_us * 1000;
  q->sigma = sigma;
  return 0;
}

/* The sampling self-test: N delays of each queue, µs, one a line; packets `gap_ns` apart (−1: far apart). */
static void print_samples(struct queue *queues, size_t nq, uint64_t n, int64_t gap_ns) {
  for (size_t k = 0; k < nq; k++) {
    struct queue *q = &queues[k];
    for (uint64_t i = 0; i < n; i++) {
      /* Far apart: the draw alone. G apart: what the packet path does (schedule_release). */
      int64_t arrival = (int64_t)i * gap_ns, delay = gap_ns < 0 ? draw_delay_ns(q) : schedule_release(q, arrival) - arrival;
      printf("%.3f\n", (double)delay / 1000.0);
    }
  }
}

int main(int argc, char **argv) {
  static struct queue queues[MAX_QUEUES];
  size_t nq = 0;
  int64_t spin_ns = 0;
  int fifo_prio = 0, no_deep_idle = 0, seeded = 0;
  uint64_t v, seed = 0, sample_n = 0;
  int64_t sample_gap_ns = -1;
  const char *stats_file = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--spin-us") && i + 1 < argc) {
      if (parse_u64(argv[++i], 1000000, &v)) return usage();
      spin_ns = (int64_t)v * 1000;
    } else if (!strcmp(argv[i], "--fifo") && i + 1 < argc) {
      if (parse_u64(argv[++i], 99, &v) || v == 0) return usage();
      fifo_prio = (int)v;
    } else if (!strcmp(argv[i], "--no-deep-idle")) {
      no_deep_idle = 1;
    } else if (!strcmp(argv[i], "--advance-ns") && i + 1 < argc) {
      if (parse_u64(argv[++i], 1000000, &v)) return usage();
      advance_ns = (int64_t)v;
    } else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
      if (parse_u64(argv[++i], UINT64_MAX, &seed)) return usage();
      seeded = 1;
    } else if (!strcmp(argv[i], "--sample") && i + 1 < argc) {
      if (parse_u64(argv[++i], 100000000, &sample_n) || sample_n == 0) return usage();
    } else if (!strcmp(argv[i], "--nfqueue-stats") && i + 1 < argc) {
      stats_file = argv[++i];
    } else if (!strcmp(argv[i], "--sample-gap-us") && i + 1 < argc) {
      if (parse_u64(argv[++i], 10000000, &v)) return usage();
      sample_gap_ns = (int64_t)v * 1000;
    } else {
      char *eq = strchr(argv[i], '=');
      if (!eq || nq == MAX_QUEUES) return usage();
      *eq = 0;
      uint64_t num, delay_us = 0;
      struct queue q = {0};
      if (parse_u64(argv[i], 65535, &num)) return usage();
      if (parse_u64(eq + 1, 10000000, &delay_us) && parse_spread(eq + 1, &q)) return usage();
      for (size_t k = 0; k < nq; k++)
        if (queues[k].num == num) return usage();
      q.num = (uint16_t)num;
      q.delay_ns = (int64_t)delay_us * 1000;
      q.last_release_ns = INT64_MIN;
      queues[nq++] = q;
    }
  }
  if (nq == 0) return usage();
  if (!seeded && getrandom(&seed, sizeof seed, 0) != sizeof seed) seed = (uint64_t)mono_ns() ^ ((uint64_t)getpid() << 32);
  for (size_t k = 0; k < nq; k++) {
    /* Each queue its own stream: the seed mixed with the queue's number. */
    uint64_t x = seed ^ ((uint64_t)queues[k].num * 0xd1b54a32d192ed03ULL);
    for (int j = 0; j < 4; j++) queues[k].rng[j] = splitmix64(&x);
  }
  if (sample_n > 0) {
    print_samples(queues, nq, sample_n, sample_gap_ns);
    return 0;
  }
  if (stats_file) {
    uint64_t queue_full, undelivered;
    if (kernel_drops(stats_file, queues, nq, &queue_full, &undelivered) < 0) {
      perror("delayline: --nfqueue-stats");
      return 1;
    }
    printf("queue full %" PRIu64 ", not delivered %" PRIu64 "\n", queue_full, undelivered);
    return 0;
  }

  /* A sleeping thread's timer may fire up to its slack late (50 µs by default): ask for none. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  if (fifo_prio > 0) {
    struct sched_param sp = {.sched_priority = fifo_prio};
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) perror("delayline: SCHED_FIFO (continuing without)");
  }
  if (no_deep_idle) {
    int qos = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
    int32_t zero = 0;
    if (qos < 0 || write(qos, &zero, sizeof zero) != sizeof zero) perror("delayline: /dev/cpu_dma_latency (continuing without)");
    /* Left open on purpose: the request lasts as long as the descriptor. */
  }
  heap = calloc(HEAP_CAP, sizeof *heap);
  if (!heap) return 1;

  struct nfq_handle *h = nfq_open();
  if (!h) {
    perror("delayline: nfq_open");
    return 1;
  }
  for (size_t k = 0; k < nq; k++) {
    struct queue *q = &queues[k];
    q->qh = nfq_create_queue(h, q->num, on_packet, q);
    if (!q->qh) {
      fprintf(stderr, "delayline: cannot bind queue %u: %s\n", q->num, strerror(errno));
      return 1;
    }
    /* Metadata only: the delay is the queue's, so the payload is never needed here. */
    if (nfq_set_mode(q->qh, NFQNL_COPY_META, 0) < 0 || nfq_set_queue_maxlen(q->qh, QUEUE_MAXLEN) < 0) {
      fprintf(stderr, "delayline: cannot configure queue %u: %s\n", q->num, strerror(errno));
      return 1;
    }
    /* GSO packets whole: segmenting them for the queue would cost the throughput netem keeps. */
    if (nfq_set_queue_flags(q->qh, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO) < 0) fprintf(stderr, "delayline: queue %u: no GSO flag (continuing)\n", q->num);
  }
  int fd = nfq_fd(h);
  nfnl_rcvbufsiz(nfq_nfnlh(h), 64 * 1024 * 1024);
  /* The kernel's "no buffer space" answers are ours to see, not to end on. */
  int one = 1;
  setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);

  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  /* Blocked except inside ppoll (which unblocks them atomically): a signal arriving between the
     `stopping` check and the wait would otherwise be handled before the wait and not end it. */
  sigset_t stop_signals, wait_mask;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_BLOCK, &stop_signals, &wait_mask);
  sigdelset(&wait_mask, SIGTERM);
  sigdelset(&wait_mask, SIGINT);

  static char buf[1 << 16];
  printf("ready\n");
  fflush(stdout);

  int failed = 0;
  while (!stopping) {
    if (drain(h, fd, buf, sizeof buf) < 0) {
      failed = 1;
      break;
    }
    release_due();
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    /* Nothing held: wait for a packet. Within the spin window: only a look at the signals (a zero
       timeout), then straight back (drain, release) until the deadline passes. */
    struct timespec zero = {0, 0}, ts;
    const struct timespec *timeout = NULL;
    if (heap_len > 0) {
      int64_t wait = heap[0].release_ns - mono_ns();
      int64_t sleep_ns = wait > spin_ns ? wait - spin_ns : 0;
      ts = (struct timespec){sleep_ns / 1000000000, sleep_ns % 1000000000};
      timeout = sleep_ns > 0 ? &ts : &zero;
    }
    if (ppoll(&pfd, 1, timeout, &wait_mask) < 0 && errno != EINTR) {
      perror("delayline: ppoll");
      failed = 1;
      break;
    }
  }

  /* Leave nothing held: what the socket still has (read, bounded: unbinding would drop it
     uncounted) and every packet held go out now. */
  for (int round = 0; round < 64 && !failed; round++)
    if (drain(h, fd, buf, sizeof buf) < 0) failed = 1;
  int64_t now = mono_ns();
  while (heap_len > 0) release(heap_pop(), now);
  /* The kernel's counts go with the queues: read them first. */
  uint64_t queue_full = 0, undelivered = 0;
  int counted = kernel_drops("/proc/net/netfilter/nfnetlink_queue", queues, nq, &queue_full, &undelivered) == 0;
  if (!counted) perror("delayline: /proc/net/netfilter/nfnetlink_queue (the kernel's drops are not counted)");
  for (size_t k = 0; k < nq; k++) nfq_destroy_queue(queues[k].qh);
  nfq_close(h);
  char kq[24] = "n/a", ku[24] = "n/a";
  if (counted) {
    snprintf(kq, sizeof kq, "%" PRIu64, queue_full);
    snprintf(ku, sizeof ku, "%" PRIu64, undelivered);
  }
  fprintf(stderr,
          "delayline: released %" PRIu64 " packets, dropped %" PRIu64 " (kernel queue full %s, not delivered %s, helper full %" PRIu64 "); held at most %zu; %" PRIu64
          " held behind the packet ahead, by up to %.0f µs; release late by p50 %.0f µs, p99 %.0f µs, max %.0f µs\n",
          released, dropped_full + queue_full + undelivered, kq, ku, dropped_full, heap_peak, pushed_behind, (double)pushed_max_ns / 1000.0, late_quantile(0.5), late_quantile(0.99),
          late_quantile(1.0));
  if (failed) {
    fprintf(stderr, "delayline: stopped by the error above, not by a signal\n");
    return 1;
  }
  return 0;
}
