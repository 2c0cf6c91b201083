/* SPDX-License-Identifier: MIT */
/*
 * trigger.c - the trigger grammar (trigger.h).
 */
#include <string.h>

#include "counters.h"
#include "spec.h"
#include "util.h"
#include "trigger.h"

static const struct {
	const char *name;
	uint8_t cmd;
	uint8_t target; /* takes :SYS:EVENT */
} cmds[] = {
	{"traceon", TRAIL_TRIG_TRACEON, 0},
	{"traceoff", TRAIL_TRIG_TRACEOFF, 0},
	{"stacktrace", TRAIL_TRIG_STACKTRACE, 0},
	{"snapshot", TRAIL_TRIG_SNAPSHOT, 0},
	{"enable_event", TRAIL_TRIG_ENABLE_EVENT, 1},
	{"disable_event", TRAIL_TRIG_DISABLE_EVENT, 1},
	{"hist", TRAIL_TRIG_HIST, 0},
	{"objtrace", TRAIL_TRIG_OBJTRACE, 0},
	{"set_wprobe", TRAIL_TRIG_SET_WPROBE, 0},
	{"clear_wprobe", TRAIL_TRIG_CLEAR_WPROBE, 0},
	{"counters", TRAIL_TRIG_COUNTERS, 0},
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

const char *trail_trigger_name(uint8_t cmd)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (cmds[i].cmd == cmd)
			return cmds[i].name;
	return "?";
}

static int fail(struct trail_filter_err *e, size_t pos, const char *msg)
{
	e->pos = (int)pos;
	strncpy(e->msg, msg, sizeof(e->msg) - 1);
	e->msg[sizeof(e->msg) - 1] = '\0';
	return -1;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* the command named s[0..n), or -1 */
static int cmd_named(const char *s, size_t n)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (strlen(cmds[i].name) == n && !memcmp(cmds[i].name, s, n))
			return (int)i;
	return -1;
}

size_t trail_trigger_event(const char *text)
{
	size_t n = strcspn(text, ": \t");
	const char *second;

	if (text[n] != ':' || cmd_named(text, n) >= 0)
		return 0;
	/* "NAME:COMMAND...": a synthetic event's bare name */
	if (cmd_named(text + n + 1, strcspn(text + n + 1, ": \t")) >= 0)
		return n;
	second = strchr(text + n + 1, ':');
	if (!second)
		return 0; /* no trigger after it: the parse says so */
	return (size_t)(second - text);
}

/* objtrace's ":add|remove:FIELD[,OFFSET][:TYPE]" at text[*i ..): up to
 * a COUNT */
static int objtrace_of(const char *text, size_t *i, size_t head, struct trail_trigger *t,
		       struct trail_filter_err *e)
{
	size_t k = *i, n, f;

	t->obj_size = 8;
	if (k >= head || text[k] != ':')
		return fail(e, k, "Missing add or remove (objtrace:add:FIELD)");
	n = strcspn(text + k + 1, ":");
	if (k + 1 + n > head)
		n = head - k - 1;
	if (n == 3 && !memcmp(text + k + 1, "add", 3))
		t->obj_remove = 0;
	else if (n == 6 && !memcmp(text + k + 1, "remove", 6))
		t->obj_remove = 1;
	else
		return fail(e, k + 1, "Invalid objtrace command (add, remove)");
	k += 1 + n;
	if (k >= head || text[k] != ':')
		return fail(e, k, "Missing FIELD (objtrace:add:FIELD[,OFFSET])");
	f = ++k;
	n = strcspn(text + k, ":,");
	if (k + n > head)
		n = head - k;
	if (!n || n >= sizeof(t->obj_field))
		return fail(e, k, "Missing FIELD (objtrace:add:FIELD[,OFFSET])");
	memcpy(t->obj_field, text + k, n);
	t->obj_field_pos = (uint16_t)f;
	k += n;
	if (k < head && text[k] == ',') { /* OFFSET: [-]decimal or 0x hex */
		size_t o = ++k, on, bad;
		int neg = k < head && text[k] == '-';
		uint64_t v;

		k += (size_t)neg;
		on = strcspn(text + k, ":");
		if (k + on > head)
			on = head - k;
		if (!on)
			return fail(e, o, "Invalid offset");
		if (trail__parse_num(text + k, on, &v, &bad))
			return fail(e, k + bad, "Invalid offset");
		if (v > (1ull << 40))
			return fail(e, k, "Invalid offset");
		t->obj_off = neg ? -(int64_t)v : (int64_t)v;
		k += on;
	}
	if (k + 1 < head && text[k] == ':' && (text[k + 1] == 'u' || text[k + 1] == 's' ||
					      text[k + 1] == 'x')) { /* :TYPE */
		size_t y = k + 1, tn = strcspn(text + y, ":");

		if (y + tn > head)
			tn = head - y;
		if ((tn == 2 && text[y + 1] == '8') || (tn == 3 && !memcmp(text + y + 1, "16", 2)) ||
		    (tn == 3 && !memcmp(text + y + 1, "32", 2)) ||
		    (tn == 3 && !memcmp(text + y + 1, "64", 2))) {
			t->obj_size = (uint8_t)(tn == 2 ? 1 : text[y + 1] == '1' ? 2 : text[y + 1] == '3' ? 4 : 8);
			t->obj_sign = text[y] == 's';
		} else {
			return fail(e, y, "Invalid type (u8..u64, s8..s64, x8..x64)");
		}
		k = y + tn;
	}
	*i = k;
	return 0;
}

/* set_wprobe's ":GRP/EVENT:FIELD[+OFFSET]", clear_wprobe's
 * ":GRP/EVENT[:FIELD[+OFFSET]]" at text[*i ..): up to a COUNT */
static int wprobe_of(const char *text, size_t *i, size_t head, struct trail_trigger *t,
		     struct trail_filter_err *e)
{
	size_t k = *i, n, f, sl;
	int clear = t->cmd == TRAIL_TRIG_CLEAR_WPROBE;

	if (k >= head || text[k] != ':')
		return fail(e, k, "Missing wprobe event (GRP/EVENT)");
	n = strcspn(text + k + 1, ":");
	if (k + 1 + n > head)
		n = head - k - 1;
	sl = strcspn(text + k + 1, "/");
	if (!n || sl >= n || sl == 0 || sl + 1 == n)
		return fail(e, k + 1, "Missing wprobe event (GRP/EVENT)");
	if (n >= sizeof(t->target))
		return fail(e, k + 1, "Event name too long");
	memcpy(t->target, text + k + 1, n);
	t->target[sl] = ':';
	t->target[n] = '\0';
	{
		const char *why;
		size_t bad = trail__spec_check(t->target, &why);

		if (bad)
			return fail(e, k + bad, why);
	}
	k += 1 + n;
	/* FIELD (a clear_wprobe's may be left out: then a COUNT or nothing) */
	if (k >= head || (clear && k + 1 < head && text[k + 1] >= '0' && text[k + 1] <= '9')) {
		if (!clear)
			return fail(e, k, "Missing FIELD (set_wprobe:GRP/EVENT:FIELD[+OFFSET])");
		*i = k;
		return 0;
	}
	f = ++k;
	n = strcspn(text + k, ":+-");
	if (k + n > head)
		n = head - k;
	if (!n || n >= sizeof(t->obj_field))
		return fail(e, k, "Missing FIELD (set_wprobe:GRP/EVENT:FIELD[+OFFSET])");
	memcpy(t->obj_field, text + k, n);
	t->obj_field_pos = (uint16_t)f;
	k += n;
	if (k < head && (text[k] == '+' || text[k] == '-')) { /* OFFSET */
		int neg = text[k] == '-';
		size_t on, bad;
		uint64_t v;

		k++;
		on = strcspn(text + k, ":");
		if (k + on > head)
			on = head - k;
		if (!on || trail__parse_num(text + k, on, &v, &bad) || v > (1ull << 40))
			return fail(e, k, "Invalid offset");
		t->obj_off = neg ? -(int64_t)v : (int64_t)v;
		k += on;
	}
	*i = k;
	return 0;
}

/* counters' ":NAME[,NAME...]" at text[*i ..): up to a COUNT */
static int counters_of(const char *text, size_t *i, size_t head, struct trail_trigger *t,
		       struct trail_filter_err *e)
{
	size_t k = *i, end;

	if (k >= head || text[k] != ':')
		return fail(e, k, "Missing counters (counters:page-faults,task-clock)");
	end = k + 1 + strcspn(text + k + 1, ":");
	if (end > head)
		end = head;
	for (k++; k <= end;) {
		size_t n = strcspn(text + k, ",:");
		int c;

		if (k + n > end)
			n = end - k;
		if (!n || (c = trail_counter_find(text + k, n)) < 0)
			return fail(e, k, "Unknown counter (page-faults, minor-faults, major-faults, "
					  "context-switches, cpu-migrations, task-clock, cpu-clock, "
					  "cycles, instructions...)");
		for (uint8_t j = 0; j < t->nctr; j++)
			if (t->ctr[j] == c)
				return fail(e, k, "This counter is already read");
		if (t->nctr == sizeof(t->ctr))
			return fail(e, k, "Too many counters (at most 8)");
		t->ctr[t->nctr++] = (uint8_t)c;
		k += n;
		if (k >= end || text[k] != ',')
			break;
		k++;
	}
	*i = k;
	return 0;
}

/* a count: 1 .. MAX, digits only */
static int count_of(const char *s, size_t n, int32_t *v)
{
	uint64_t x = 0;

	if (!n || n > 10)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	if (!x || x > TRAIL_TRIG_MAX_COUNT)
		return -1;
	*v = (int32_t)x;
	return 0;
}

int trail_trigger_parse(const char *text, struct trail_trigger *t, struct trail_filter_err *e)
{
	size_t len = strlen(text), head = len, i = 0, n;
	int c;

	memset(t, 0, sizeof(*t));
	t->count = -1;
	e->pos = -1;
	e->msg[0] = '\0';
	/* "... if FILTER": the first "if" standing alone */
	for (size_t k = 0; k + 2 <= len; k++)
		if ((k == 0 || is_space(text[k - 1])) && text[k] == 'i' && text[k + 1] == 'f' &&
		    (!text[k + 2] || is_space(text[k + 2]))) {
			head = k;
			t->filter = text + k + 2;
			while (is_space(*t->filter))
				t->filter++;
			if (!*t->filter)
				return fail(e, k + 2, "Meaningless filter expression");
			break;
		}
	while (head && is_space(text[head - 1]))
		head--;
	while (i < head && is_space(text[i]))
		i++;
	n = strcspn(text + i, ":");
	if (i + n > head)
		n = head - i;
	if (!n)
		return fail(e, i, "Missing trigger command");
	if ((c = cmd_named(text + i, n)) < 0)
		return fail(e, i, "Unknown trigger command (traceon, traceoff, snapshot, "
				  "stacktrace, enable_event, disable_event, hist, objtrace, set_wprobe, "
				  "clear_wprobe, counters)");
	t->cmd = cmds[c].cmd;
	if (t->cmd == TRAIL_TRIG_HIST) { /* its own grammar, `if` included (hist.h) */
		t->hist = text + i;
		t->filter = NULL;
		return 0;
	}
	i += n;
	if (t->cmd == TRAIL_TRIG_OBJTRACE && objtrace_of(text, &i, head, t, e))
		return -1;
	if ((t->cmd == TRAIL_TRIG_SET_WPROBE || t->cmd == TRAIL_TRIG_CLEAR_WPROBE) &&
	    wprobe_of(text, &i, head, t, e))
		return -1;
	if (t->cmd == TRAIL_TRIG_COUNTERS && counters_of(text, &i, head, t, e))
		return -1;
	if (cmds[c].target) {
		size_t s0 = i + 1, sn, en;

		if (i >= head || text[i] != ':')
			return fail(e, i, "Missing SYS:EVENT");
		sn = strcspn(text + s0, ":");
		if (s0 + sn >= head || !sn)
			return fail(e, s0, "Missing SYS:EVENT");
		en = strcspn(text + s0 + sn + 1, ":");
		if (s0 + sn + 1 + en > head)
			en = head - (s0 + sn + 1);
		if (!en)
			return fail(e, s0 + sn + 1, "Missing EVENT of SYS:EVENT");
		if (sn + 1 + en >= sizeof(t->target))
			return fail(e, s0, "Event name too long");
		memcpy(t->target, text + s0, sn + 1 + en);
		t->target[sn + 1 + en] = '\0';
		{
			const char *why;
			size_t bad = trail__spec_check(t->target, &why);

			if (bad)
				return fail(e, s0 + bad - 1, why);
		}
		i = s0 + sn + 1 + en;
	}
	if (i < head) { /* :COUNT */
		if (text[i] != ':')
			return fail(e, i, "Invalid trigger");
		if (count_of(text + i + 1, head - i - 1, &t->count))
			return fail(e, i + 1, "Invalid count (1 to 2147483647)");
	}
	return 0;
}

int trail_trigger_spec_line(const char *v, size_t len, char *buf, size_t *plen,
			    struct trail_trigger *t)
{
	const char *sp = memchr(v, ' ', len);
	struct trail_filter_err e;
	size_t n;

	if (!sp)
		return -1;
	n = len - (size_t)(sp + 1 - v);
	if (n >= TRAIL_FILTER_MAX_TEXT)
		return -1;
	memcpy(buf, sp + 1, n);
	buf[n] = '\0';
	*plen = (size_t)(sp - v);
	return trail_trigger_parse(buf, t, &e);
}

int trail__trigger_lines_on(char *const *lines, int n, const char *event)
{
	const char *colon = strchr(event, ':');
	char prov[256];
	int k = 0;

	if (!colon || (size_t)(colon - event) >= sizeof(prov))
		return 0;
	memcpy(prov, event, (size_t)(colon - event));
	prov[colon - event] = '\0';
	for (int i = 0; i < n; i++) {
		const char *pat = lines[i] + 9, *sp = strchr(pat, ' ');

		if (!strncmp(lines[i], "@trigger ", 9) && sp)
			k += trail__spec_match1(pat, (size_t)(sp - pat), prov, colon + 1);
	}
	return k;
}

int trail__trigger_line_event(const char *line, char *buf, size_t n)
{
	const char *pat = line + 9, *sp;
	size_t len;

	if (strncmp(line, "@trigger ", 9) || !(sp = strchr(pat, ' ')))
		return 0;
	len = (size_t)(sp - pat);
	if (len >= n || !memchr(pat, ':', len) || memchr(pat, '*', len) || memchr(pat, '?', len) ||
	    memchr(pat, '[', len))
		return 0;
	memcpy(buf, pat, len);
	buf[len] = '\0';
	return 1;
}
