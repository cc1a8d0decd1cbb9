/*
 * nfq-netem: a netem substitute for kernels built without sch_netem.
 *
 * Packets handed to it by an iptables NFQUEUE rule are held for a delay
 * (fixed plus uniform jitter of +/- JITTER_MS) and then accepted, or dropped
 * with probability LOSS_PCT. Packets leave in the order they arrived, like a
 * real queue: jitter never reorders them.
 *
 * usage: nfq-netem QUEUE_NUM DELAY_MS LOSS_PCT [JITTER_MS [PARAMS_FILE]]
 *
 * With PARAMS_FILE, SIGHUP re-reads "DELAY_MS LOSS_PCT JITTER_MS" from it, so a
 * live lab changes its impairment without unbinding the queue.
 * Based on /work/shared/lab-reference/nfq-netem.c; builds with
 *   gcc -O2 -Wall -o nfq-netem nfq-netem.c -lnetfilter_queue
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>

#define RING 65536 /* more than the queue can hold (maxlen below) */
#define QUEUE_MAXLEN 16384

struct item { uint32_t id; uint64_t due; };
static struct item ring[RING];
static unsigned head, tail;
static double loss_pct;
static double delay_ns, jitter_ns;
static uint64_t last_due; /* FIFO: a packet never leaves before the one ahead of it */
static unsigned long n_in, n_drop, n_overflow;
static volatile sig_atomic_t stop, reload;
static const char *params_file;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static int set_params(double delay_ms, double loss, double jitter_ms) {
  if (delay_ms < 0 || loss < 0 || loss > 100 || jitter_ms < 0) return -1;
  delay_ns = delay_ms * 1e6;
  loss_pct = loss;
  jitter_ns = jitter_ms * 1e6;
  return 0;
}

static void load_params_file(void) {
  FILE *f = fopen(params_file, "r");
  double d, l, j;
  if (!f) { perror(params_file); return; }
  if (fscanf(f, "%lf %lf %lf", &d, &l, &j) != 3 || set_params(d, l, j) != 0)
    fprintf(stderr, "nfq-netem: %s: expected 'DELAY_MS LOSS_PCT JITTER_MS', keeping old values\n", params_file);
  else
    fprintf(stderr, "nfq-netem: reloaded delay=%.3fms loss=%.2f%% jitter=%.3fms\n", d, l, j);
  fclose(f);
}

static int cb(struct nfq_q_handle *qh, struct nfgenmsg *m, struct nfq_data *nfa, void *data) {
  (void)m; (void)data;
  struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
  uint32_t id = ntohl(ph->packet_id);
  n_in++;
  if (loss_pct > 0 && drand48() * 100.0 < loss_pct) { n_drop++; return nfq_set_verdict(qh, id, NF_DROP, 0, NULL); }
  double d = delay_ns + (jitter_ns > 0 ? (drand48() * 2.0 - 1.0) * jitter_ns : 0);
  if (d <= 0 && head == tail) return nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL);
  if (tail - head >= RING) { n_overflow++; return nfq_set_verdict(qh, id, NF_DROP, 0, NULL); }
  uint64_t due = now_ns() + (uint64_t)(d > 0 ? d : 0);
  if (due < last_due) due = last_due;
  last_due = due;
  ring[tail % RING] = (struct item){id, due};
  tail++;
  return 0;
}

static void on_stop(int s) { (void)s; stop = 1; }
static void on_hup(int s) { (void)s; reload = 1; }

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s QUEUE_NUM DELAY_MS LOSS_PCT [JITTER_MS [PARAMS_FILE]]\n", argv[0]);
    return 2;
  }
  int qnum = atoi(argv[1]);
  if (set_params(atof(argv[2]), atof(argv[3]), argc > 4 ? atof(argv[4]) : 0) != 0) {
    fprintf(stderr, "nfq-netem: bad parameters\n");
    return 2;
  }
  params_file = argc > 5 ? argv[5] : NULL;
  srand48((long)now_ns());
  prctl(PR_SET_TIMERSLACK, 1UL); /* wake within ~1 us of a packet's due time, not the default 50 us */
  /* A real-time class keeps delays accurate on a busy host (other processes
   * cannot delay our wake-ups); the kernel's RT throttling still bounds us. */
  struct sched_param sp = {.sched_priority = 10};
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) perror("nfq-netem: SCHED_FIFO not available, delays may stretch under load");

  struct sigaction sa = {0};
  sa.sa_handler = on_stop;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sa.sa_handler = on_hup;
  sigaction(SIGHUP, &sa, NULL);

  struct nfq_handle *h = nfq_open();
  if (!h) { perror("nfq_open"); return 1; }
  struct nfq_q_handle *qh = nfq_create_queue(h, (uint16_t)qnum, &cb, NULL);
  if (!qh) { perror("nfq_create_queue"); return 1; }
  nfq_set_mode(qh, NFQNL_COPY_META, 0);
  nfq_set_queue_maxlen(qh, QUEUE_MAXLEN);
  int fd = nfq_fd(h);
  int rcvbuf = 8 * 1024 * 1024; /* room for bursts; root may exceed rmem_max */
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
  static char buf[65536];
  fprintf(stderr, "nfq-netem: queue=%d delay=%.3fms loss=%.2f%% jitter=%.3fms\n", qnum, delay_ns / 1e6, loss_pct,
          jitter_ns / 1e6);

  while (!stop) {
    if (reload) { reload = 0; if (params_file) load_params_file(); }
    struct timespec ts, *tsp = NULL;
    if (head != tail) {
      uint64_t n = now_ns(), due = ring[head % RING].due;
      uint64_t wait = due > n ? due - n : 0;
      ts.tv_sec = (time_t)(wait / 1000000000ULL);
      ts.tv_nsec = (long)(wait % 1000000000ULL);
      tsp = &ts;
    }
    struct pollfd p = {fd, POLLIN, 0};
    if (ppoll(&p, 1, tsp, NULL) > 0) {
      /* drain everything that is ready, so a burst does not wait for one poll per packet */
      for (;;) {
        int r = (int)recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (r > 0) { nfq_handle_packet(h, buf, r); continue; }
        if (r < 0 && errno == ENOBUFS) continue; /* kernel dropped some: keep going */
        break;
      }
    }
    uint64_t n = now_ns();
    while (head != tail && ring[head % RING].due <= n) {
      nfq_set_verdict(qh, ring[head % RING].id, NF_ACCEPT, 0, NULL);
      head++;
    }
  }
  while (head != tail) { nfq_set_verdict(qh, ring[head % RING].id, NF_ACCEPT, 0, NULL); head++; }
  fprintf(stderr, "nfq-netem: %lu packets, %lu dropped, %lu overflowed\n", n_in, n_drop, n_overflow);
  nfq_destroy_queue(qh);
  nfq_close(h);
  return 0;
}
