/*
 * The C agent's event-loop model (--workers event-loop, docs/agents.md):
 * one thread, the agent's own, drives a load's N connections through
 * epoll, each socket non-blocking, as redis-benchmark's ae loop drives
 * its clients. Each connection does its ops one after another, with its
 * library's asynchronous calls (agent.h: nonblock, send, flush, recv):
 * closed loop, an op starting when the one before it on its connection
 * is answered, or paced, op j of connection c due at T0 + offset[c] +
 * j*interval and started then (a timerfd set to the earliest due time
 * wakes the loop), or when the op before it ends, if later. Timing,
 * errors and the failure rule are the thread model's (agent.c): an op's
 * latency from its send to its answer on CLOCK_MONOTONIC, lag its start
 * less its due time, MAX_FAILS failed ops in a row end a connection's
 * ops, and an op unanswered after the open's op_timeout_ms ends them too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "core.h"

/* One connection of the loop. */
struct evconn {
	struct part *w;
	const struct backend *b;
	void *c;
	int fd;
	uint32_t events; /* what epoll waits for on fd now */
	int busy, done;  /* an op in flight; no more ops */
	int gaveup;      /* an op went unanswered past its timeout: shut */
	int gone;        /* the server closed it: out of epoll */
	size_t j;        /* the op in flight, or the next */
	long warm;       /* untimed ops left, in the warm-up */
	int64_t due, start, deadline;
	int fails;
	char err[512];
};

struct evloop {
	struct load *L;
	struct evconn *cs;
	size_t n, left; /* connections, and those not done */
	int ep, tfd;
	int warmup;          /* in the warm-up: untimed ops, closed loop */
	int64_t timeout, at; /* an op's timeout; the time the timer is set to */
};

/* watch makes epoll wait for events on c's socket. */
static void watch(struct evloop *E, struct evconn *c, uint32_t events) {
	if (c->events == events)
		return;
	struct epoll_event ev = {.events = events, .data.u32 = (uint32_t)(c - E->cs)};
	epoll_ctl(E->ep, EPOLL_CTL_MOD, c->fd, &ev);
	c->events = events;
}

static void set_done(struct evloop *E, struct evconn *c) {
	if (!c->done) {
		c->done = 1;
		E->left--;
	}
}

/* finish ends c's op in flight, answered (rc 1) or failed (-1), at end. */
static void finish(struct evloop *E, struct evconn *c, int rc, long len, int64_t end) {
	c->busy = 0;
	if (E->warmup) {
		c->j++;
		if (--c->warm <= 0)
			set_done(E, c);
		return;
	}
	struct part *w = c->w;
	size_t j = c->j++;
	w->ns[j] = end - c->start;
	if (E->L->interval > 0)
		w->lag[j] = c->start > c->due ? c->start - c->due : 0;
	w->n = j + 1;
	if (check_value(rc > 0 ? 0 : -1, len, E->L->want, c->err, sizeof c->err) == 0) {
		c->fails = 0;
		return;
	}
	keep_error(w, j, c->err);
	if (++c->fails >= MAX_FAILS)
		set_done(E, c);
}

/* start sends c's next op, timed from now. */
static void start(struct evloop *E, struct evconn *c) {
	json_t *key = json_array_get(c->w->keys, c->j % c->w->nkeys);
	c->err[0] = 0;
	c->start = now_ns();
	if (c->gone)
		snprintf(c->err, sizeof c->err, "%s", c->gaveup ? "an op before it went unanswered past the op timeout, and its connection was shut"
		                                                : "the server closed the connection");
	int rc = c->gone ? -1 : c->b->send(c->c, key, c->err, sizeof c->err);
	if (rc < 0) {
		c->busy = 1;
		finish(E, c, -1, -1, now_ns());
		return;
	}
	c->busy = 1;
	c->deadline = c->start + E->timeout;
	watch(E, c, EPOLLIN | (rc ? EPOLLOUT : 0));
}

/* next starts c's next op if it is due at now, or says c is done; else
 * c->due is when it is. */
static void next(struct evloop *E, struct evconn *c, int64_t now) {
	const struct load *L = E->L;
	if (E->warmup) {
		if (c->warm > 0)
			start(E, c);
		else
			set_done(E, c);
		return;
	}
	int64_t end = L->duration > 0 ? L->t0 + L->duration : INT64_MAX;
	if (c->j >= c->w->cap) {
		set_done(E, c);
		return;
	}
	if (L->interval > 0) {
		c->due = L->t0 + c->w->offset + (int64_t)c->j * L->interval;
		if (c->due >= end) {
			set_done(E, c);
			return;
		}
	} else {
		c->due = L->t0; /* closed loop: from T0 on */
		if (now >= end) {
			set_done(E, c);
			return;
		}
	}
	if (now >= c->due)
		start(E, c);
}

/* on_event handles what epoll said of c's socket. */
static void on_event(struct evloop *E, struct evconn *c, uint32_t events) {
	if (!c->busy) { /* readable with no op in flight: the server closed it, or spoke out of turn */
		if (events & (EPOLLERR | EPOLLHUP)) { /* reported whatever epoll waits for */
			epoll_ctl(E->ep, EPOLL_CTL_DEL, c->fd, NULL);
			c->gone = 1;
		}
		watch(E, c, 0);
		return;
	}
	int rc = 0;
	long len = -1;
	if (events & EPOLLOUT) {
		rc = c->b->flush(c->c, c->err, sizeof c->err);
		if (rc == 0)
			watch(E, c, EPOLLIN);
		if (rc >= 0)
			rc = 0;
	}
	if (rc == 0 && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		rc = c->b->recv(c->c, &len, c->err, sizeof c->err);
	if (rc == 0)
		return;
	int64_t end = now_ns();
	finish(E, c, rc, len, end);
	if (!c->done)
		next(E, c, end);
}

/* expire fails every op in flight past its deadline, and shuts its
 * connection: its library may hold half of the late answer, which the
 * next op on it would read as its own. Every later op on it fails at
 * once (the thread model's hiredis fails them so after its timeout), in
 * this load until MAX_FAILS in a row end its ops, and in a block. */
static void expire(struct evloop *E, int64_t now) {
	for (size_t i = 0; i < E->n; i++) {
		struct evconn *c = &E->cs[i];
		if (c->busy && now >= c->deadline) {
			snprintf(c->err, sizeof c->err, "no answer within %lld ms: dbsock's agent shuts this connection",
				(long long)(E->timeout / 1000000));
			finish(E, c, -1, -1, now);
			c->gaveup = 1;
			epoll_ctl(E->ep, EPOLL_CTL_DEL, c->fd, NULL);
			shutdown(c->fd, SHUT_RDWR);
			c->gone = 1;
		}
	}
}

/* arm sets the timer to t (INT64_MAX: unset), where it is not set so. */
static void arm(struct evloop *E, int64_t t) {
	if (t == E->at)
		return;
	struct itimerspec its = {0};
	if (t != INT64_MAX)
		its.it_value = (struct timespec){t / 1000000000, t % 1000000000};
	timerfd_settime(E->tfd, TFD_TIMER_ABSTIME, &its, NULL);
	E->at = t;
}

/* pass runs the loop until every connection is done, each one's ops
 * started by next. */
static void pass(struct evloop *E) {
	struct epoll_event evs[64];
	while (E->left > 0) {
		int64_t now = now_ns(), due = INT64_MAX, deadline = INT64_MAX;
		int ready = 0; /* an op whose send failed at once: the next is due now */
		for (size_t i = 0; i < E->n; i++) {
			struct evconn *c = &E->cs[i];
			if (!c->done && !c->busy)
				next(E, c, now);
			if (c->busy && c->deadline < deadline)
				deadline = c->deadline;
			else if (!c->done && !c->busy && c->due < due)
				due = c->due;
			ready |= !c->done && !c->busy && c->due <= now;
		}
		if (E->left == 0)
			break;
		arm(E, due);
		int ms = ready ? 0 : deadline == INT64_MAX ? -1 : deadline <= now ? 0 : (int)((deadline - now) / 1000000 + 1);
		int k = epoll_wait(E->ep, evs, 64, ms);
		for (int e = 0; e < k; e++) {
			if (evs[e].data.u32 == UINT32_MAX) {
				uint64_t ticks;
				if (read(E->tfd, &ticks, sizeof ticks) < 0)
					E->at = 0; /* read again at the next arm */
				continue;
			}
			on_event(E, &E->cs[evs[e].data.u32], evs[e].events);
		}
		expire(E, now_ns());
	}
}

/* ev_open readies the loop of a load: epoll, the timer, and each part's
 * connection non-blocking and watched. "" or what failed in msg. */
static void ev_open(struct evloop *E, struct part *w, char *msg, size_t len) {
	E->ep = epoll_create1(EPOLL_CLOEXEC);
	E->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	struct epoll_event tev = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
	if (E->ep < 0 || E->tfd < 0 || epoll_ctl(E->ep, EPOLL_CTL_ADD, E->tfd, &tev) < 0) {
		snprintf(msg, len, "load: could not make the event loop's epoll and timer: %s", strerror(errno));
		return;
	}
	for (size_t i = 0; i < E->n; i++) {
		struct evconn *c = &E->cs[i];
		*c = (struct evconn){.w = &w[i], .b = w[i].s->b, .c = w[i].s->conn, .fd = -1};
		if (!c->b->send) {
			snprintf(msg, len, "load: %.128s is a connection of %s, which has no asynchronous API this event loop drives", w[i].s->id, c->b->library);
			return;
		}
		int fd = c->b->nonblock(c->c, 1, c->err, sizeof c->err);
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
		if (fd < 0 || epoll_ctl(E->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			snprintf(msg, len, "load: could not watch %.128s: %s", w[i].s->id, fd < 0 ? c->err : strerror(errno));
			if (fd >= 0)
				c->b->nonblock(c->c, 0, c->err, sizeof c->err);
			return;
		}
		c->fd = fd;
		c->events = EPOLLIN;
	}
}

/* ev_close gives each connection back to blocking calls. */
static void ev_close(struct evloop *E) {
	for (size_t i = 0; i < E->n; i++) {
		struct evconn *c = &E->cs[i];
		if (c->fd < 0)
			continue;
		epoll_ctl(E->ep, EPOLL_CTL_DEL, c->fd, NULL);
		c->b->nonblock(c->c, 0, c->err, sizeof c->err);
	}
	if (E->tfd >= 0)
		close(E->tfd);
	if (E->ep >= 0)
		close(E->ep);
}

/* op_timeout is the op timeout of the open of slot s, in nanoseconds. */
static int64_t op_timeout(struct slot *s) {
	json_int_t ms = json_integer_value(json_object_get(s->open, "op_timeout_ms"));
	return (int64_t)(ms > 0 ? ms : 10000) * 1000000;
}

void ev_load(struct load *L, struct part *w, size_t n, char *msg, size_t len) {
	if (L->connect) {
		snprintf(msg, len, "load: the event-loop model times lookups on open connections; run the connect scenario a thread per connection (--workers threads)");
		return;
	}
	struct evloop E = {.L = L, .n = n, .ep = -1, .tfd = -1, .timeout = op_timeout(w[0].s), .at = INT64_MAX};
	E.cs = calloc(n, sizeof *E.cs);
	if (!E.cs) {
		snprintf(msg, len, "load: out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++)
		E.cs[i].fd = -1; /* not watched, until ev_open makes it so */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); /* the timer fires within a few us of its time */
	ev_open(&E, w, msg, len);
	if (!msg[0]) {
		E.warmup = 1;
		for (size_t i = 0; i < n; i++) {
			E.cs[i].warm = L->warmup;
			if (L->warmup > 0)
				E.left++;
			else
				E.cs[i].done = 1;
		}
		pass(&E);
		E.warmup = 0;
		E.left = 0;
		for (size_t i = 0; i < n; i++) { /* one shut in the warm-up fails its ops at once */
			struct evconn *c = &E.cs[i];
			c->j = 0, c->fails = 0, c->done = 0;
			E.left++;
		}
		L->t0 = now_ns();
		pass(&E);
	}
	ev_close(&E);
	free(E.cs);
}
