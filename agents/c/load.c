/*
 * The C agent's plan of a load (protocol 2), the same in both its worker
 * models: its parts checked and filled from the load message, their
 * arrays allocated and touched before any op, each op's error kept.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

int check_value(int rc, long len, long want, char *err, size_t size) {
	if (rc != 0 || len == want)
		return rc;
	if (len < 0)
		snprintf(err, size, "no value");
	else
		snprintf(err, size, "value of %ld bytes, want %ld", len, want);
	return -1;
}

static const char not_kept[] = "(its message not kept: this connection's errors filled 16 KiB)";

void sleep_until(int64_t t) {
	struct timespec ts = {t / 1000000000, t % 1000000000};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

void keep_error(struct part *w, size_t j, const char *msg) {
	struct op_error *e = &w->errs[w->nerr++];
	e->index = (uint32_t)j;
	if (w->nerr > 1 && strcmp(w->arena + e[-1].at, msg) == 0) {
		e->at = e[-1].at;
		return;
	}
	size_t len = strnlen(msg, 511);
	if (w->used + len + 1 > ERR_ARENA) {
		e->at = 0; /* not_kept */
		return;
	}
	memcpy(w->arena + w->used, msg, len);
	w->arena[w->used + len] = 0;
	e->at = (uint32_t)w->used;
	w->used += len + 1;
}

/* load_int reads m's integer k (absent or null: 0) into out: 0, or -1 with
 * msg set when it is not an integer from lo to hi. */
static int load_int(json_t *m, const char *k, int64_t lo, int64_t hi, int64_t *out, char *msg, size_t n) {
	json_t *v = json_object_get(m, k);
	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi) {
		*out = json_integer_value(v);
		return 0;
	}
	snprintf(msg, n, "load: %s must be an integer from %lld to %lld", k, (long long)lo, (long long)hi);
	return -1;
}

void load_plan(json_t *m, struct load *L, struct part *w, size_t n, char *msg, size_t len) {
	json_t *ids = json_object_get(m, "ids"), *keys = json_object_get(m, "keys"), *offs = json_object_get(m, "offsets_ns");
	int64_t warmup, want, max_ops;
	if (load_int(m, "warmup", 0, MAX_WARMUP, &warmup, msg, len) || load_int(m, "value_length", 0, INT32_MAX, &want, msg, len) ||
	    load_int(m, "interval_ns", 0, MAX_SPAN_NS, &L->interval, msg, len) ||
	    load_int(m, "duration_ns", 0, MAX_SPAN_NS, &L->duration, msg, len) || load_int(m, "max_ops", 0, MAX_LOAD_OPS, &max_ops, msg, len))
		return;
	L->warmup = (long)warmup, L->want = (long)want;
	if ((L->connect = scenario_of(m, msg, len)) < 0)
		return;
	if (json_array_size(keys) != n) {
		snprintf(msg, len, "load: %zu ids and %zu lists of keys: one list per id", n, json_array_size(keys));
		return;
	}
	if (L->interval > 0 && offs && !json_is_null(offs) && json_array_size(offs) != n) {
		snprintf(msg, len, "load: %zu ids and %zu offsets_ns: one offset per id", n, json_array_size(offs));
		return;
	}
	if (L->duration > 0 && L->interval == 0 && max_ops == 0) {
		snprintf(msg, len, "load: a closed loop for duration_ns needs max_ops, the most ops per connection");
		return;
	}
	size_t total = 0;
	for (size_t c = 0; c < n; c++) {
		const char *id = json_string_value(json_array_get(ids, c));
		struct slot *s = id ? find(id) : NULL;
		if (!s) {
			snprintf(msg, len, "load: ids[%zu] %.128s is no open connection", c, id ? id : "(not a string)");
			return;
		}
		for (size_t d = 0; d < c; d++)
			if (w[d].s == s) {
				snprintf(msg, len, "load: %.128s is given twice: a connection is run by one thread", id);
				return;
			}
		w[c] = (struct part){.load = L, .s = s, .keys = json_array_get(keys, c)};
		w[c].nkeys = json_array_size(w[c].keys);
		if (w[c].nkeys == 0) {
			snprintf(msg, len, "load: no keys for %.128s", id);
			return;
		}
		if (L->interval > 0 && offs && !json_is_null(offs)) {
			json_t *o = json_array_get(offs, c);
			if (!json_is_integer(o) || json_integer_value(o) < 0 || json_integer_value(o) > MAX_SPAN_NS) {
				snprintf(msg, len, "load: offsets_ns[%zu] must be an integer from 0 to %lld", c, (long long)MAX_SPAN_NS);
				return;
			}
			w[c].offset = json_integer_value(o);
		}
		size_t cap = w[c].nkeys;
		if (L->duration > 0) {
			cap = (size_t)max_ops;
			if (L->interval > 0) { /* the ops due before T0 + duration */
				int64_t room = L->duration - w[c].offset;
				size_t due = room > 0 ? (size_t)((room + L->interval - 1) / L->interval) : 0;
				if (max_ops == 0 || due < cap)
					cap = due;
			}
		}
		w[c].cap = cap;
		total += cap > MAX_LOAD_OPS ? MAX_LOAD_OPS + 1 : cap;
		if (total > MAX_LOAD_OPS) {
			snprintf(msg, len, "load: over %d ops in all; split it", MAX_LOAD_OPS);
			return;
		}
	}
}

void load_free(struct part *w, size_t n) {
	for (size_t c = 0; c < n; c++) {
		free(w[c].ns);
		free(w[c].lag);
		free(w[c].errs);
		free(w[c].arena);
	}
	free(w);
}

void load_alloc(struct load *L, struct part *w, size_t n, char *msg, size_t len) {
	for (size_t c = 0; c < n; c++) {
		size_t cap = w[c].cap ? w[c].cap : 1;
		w[c].ns = malloc(cap * sizeof *w[c].ns);
		w[c].lag = L->interval > 0 ? malloc(cap * sizeof *w[c].lag) : NULL;
		w[c].errs = malloc(cap * sizeof *w[c].errs);
		w[c].arena = malloc(ERR_ARENA);
		if (!w[c].ns || (L->interval > 0 && !w[c].lag) || !w[c].errs || !w[c].arena) {
			snprintf(msg, len, "load: out of memory for %zu ops", cap);
			return;
		}
		/* Touched now, not in the timed part. */
		memset(w[c].ns, 0, cap * sizeof *w[c].ns);
		if (w[c].lag)
			memset(w[c].lag, 0, cap * sizeof *w[c].lag);
		memcpy(w[c].arena, not_kept, sizeof not_kept);
		w[c].used = sizeof not_kept;
	}
}
