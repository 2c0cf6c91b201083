/* SPDX-License-Identifier: MIT */
/*
 * trailmodule.c - the Python module trail's C part (_trail): events
 * defined at run time (trail/uevent.h) as Python objects.
 *
 *   ev = trail.event("app", "request", fd="u32", path="string")
 *   if ev.enabled:                   # one load of the status word
 *       ev(fd=3, path="/index.html") # or ev(3, "/index.html")
 *
 * An event is called with vectorcall (no argument tuple, no keyword
 * dict); when no session records it the call returns at once. Values are
 * checked against the field types: an int field takes int (bool too), a
 * float field float or int, a string field str or None, a bytes field
 * bytes, bytearray or None, a bool field anything Python calls true or
 * false; anything else is a TypeError naming the field.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <string.h>

#include <trail/uevent.h>

#define MAX_FIELDS 128
#define TRAIL_CARET_MAX 512

typedef struct {
	PyObject_HEAD
	struct trail_uevent *ev;
	const uint32_t *state;
	vectorcallfunc vectorcall;
	unsigned nfields;
	PyObject *system, *name, *definition;
	PyObject *names[MAX_FIELDS];    /* interned field names */
	enum trail_uevent_kind kinds[MAX_FIELDS];
	unsigned sizes[MAX_FIELDS];
} EventObject;

static PyTypeObject EventType;

/* one value of field i into v: 0, or -1 with an exception set */
static int value_of(EventObject *e, unsigned i, PyObject *o, struct trail_uvalue *v)
{
	const char *why;

	v->len = 0;
	switch (e->kinds[i]) {
	case TRAIL_UEVENT_SIGNED:
		if (!PyLong_Check(o)) {
			why = "int";
			break;
		}
		v->i = PyLong_AsLongLong(o);
		if (v->i == -1 && PyErr_Occurred())
			return -1;
		return 0;
	case TRAIL_UEVENT_UNSIGNED:
		if (!PyLong_Check(o)) {
			why = "int";
			break;
		}
		/* (a negative one as two's complement; past 64 bits, an
		 * OverflowError; past the field's size, its low bytes) */
		if (_PyLong_Sign(o) < 0) {
			v->i = PyLong_AsLongLong(o);
			return v->i == -1 && PyErr_Occurred() ? -1 : 0;
		}
		v->u = PyLong_AsUnsignedLongLong(o);
		return v->u == (uint64_t)-1 && PyErr_Occurred() ? -1 : 0;
	case TRAIL_UEVENT_BOOL: {
		int t = PyObject_IsTrue(o);

		if (t < 0)
			return -1;
		v->u = (uint64_t)t;
		return 0;
	}
	case TRAIL_UEVENT_FLOAT:
		if (PyFloat_CheckExact(o)) {
			v->d = PyFloat_AS_DOUBLE(o);
			return 0;
		}
		if (!PyFloat_Check(o) && !PyLong_Check(o)) {
			why = "float";
			break;
		}
		v->d = PyFloat_AsDouble(o);
		return v->d == -1.0 && PyErr_Occurred() ? -1 : 0;
	case TRAIL_UEVENT_STRING:
		if (o == Py_None) {
			v->p = NULL;
			return 0;
		}
		if (!PyUnicode_Check(o)) {
			why = "str";
			break;
		} else {
			Py_ssize_t n;
			const char *s = PyUnicode_AsUTF8AndSize(o, &n);

			if (!s)
				return -1;
			v->p = s;
			v->len = n > 0xffff ? 0xffff : (uint32_t)n;
			return 0;
		}
	case TRAIL_UEVENT_BYTES:
		if (o == Py_None) {
			v->p = NULL;
			return 0;
		}
		if (PyBytes_Check(o)) {
			v->p = PyBytes_AS_STRING(o);
			v->len = (uint32_t)(PyBytes_GET_SIZE(o) > 0xffffff ? 0xffffff : PyBytes_GET_SIZE(o));
			return 0;
		}
		if (PyByteArray_Check(o)) {
			v->p = PyByteArray_AS_STRING(o);
			v->len = (uint32_t)(PyByteArray_GET_SIZE(o) > 0xffffff ? 0xffffff
									 : PyByteArray_GET_SIZE(o));
			return 0;
		}
		why = "bytes";
		break;
	default:
		why = "a value";
		break;
	}
	PyErr_Format(PyExc_TypeError, "%U:%U: field '%U' takes %s, not %.100s", e->system, e->name,
		     e->names[i], why, Py_TYPE(o)->tp_name);
	return -1;
}

static PyObject *event_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
				  PyObject *kwnames)
{
	EventObject *e = (EventObject *)self;
	Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
	struct trail_uvalue v[MAX_FIELDS];
	unsigned char seen[MAX_FIELDS];
	int r;

	if (!__atomic_load_n(e->state, __ATOMIC_RELAXED))
		Py_RETURN_NONE; /* (no session records it: nothing checked either) */
	if (nargs > (Py_ssize_t)e->nfields) {
		PyErr_Format(PyExc_TypeError, "%U:%U takes %u values, %zd given", e->system, e->name,
			     e->nfields, nargs + nkw);
		return NULL;
	}
	memset(seen, 0, e->nfields);
	for (Py_ssize_t i = 0; i < nargs; i++) {
		if (value_of(e, (unsigned)i, args[i], &v[i]))
			return NULL;
		seen[i] = 1;
	}
	for (Py_ssize_t k = 0; k < nkw; k++) {
		PyObject *kw = PyTuple_GET_ITEM(kwnames, k);
		unsigned i;

		for (i = 0; i < e->nfields && e->names[i] != kw; i++)
			;
		if (i == e->nfields)
			for (i = 0; i < e->nfields && PyUnicode_Compare(e->names[i], kw) != 0; i++)
				;
		if (i == e->nfields) {
			PyErr_Format(PyExc_TypeError, "%U:%U has no field '%U'", e->system, e->name, kw);
			return NULL;
		}
		if (seen[i]) {
			PyErr_Format(PyExc_TypeError, "%U:%U: field '%U' given twice", e->system, e->name, kw);
			return NULL;
		}
		if (value_of(e, i, args[nargs + k], &v[i]))
			return NULL;
		seen[i] = 1;
	}
	for (unsigned i = 0; i < e->nfields; i++)
		if (!seen[i]) {
			PyErr_Format(PyExc_TypeError, "%U:%U: field '%U' missing", e->system, e->name,
				     e->names[i]);
			return NULL;
		}
	r = trail_uevent_write(e->ev, v, e->nfields);
	if (r) {
		errno = -r;
		return PyErr_SetFromErrno(PyExc_OSError);
	}
	Py_RETURN_NONE;
}

static void event_dealloc(EventObject *e)
{
	trail_uevent_free(e->ev);
	for (unsigned i = 0; i < e->nfields; i++)
		Py_XDECREF(e->names[i]);
	Py_XDECREF(e->system);
	Py_XDECREF(e->name);
	Py_XDECREF(e->definition);
	Py_TYPE(e)->tp_free((PyObject *)e);
}

static PyObject *event_enabled(EventObject *e, void *closure)
{
	(void)closure;
	return PyBool_FromLong(__atomic_load_n(e->state, __ATOMIC_RELAXED) != 0);
}

static PyObject *event_fields(EventObject *e, void *closure)
{
	static const char *const kinds[] = {"", "int", "int", "bool", "float", "str", "bytes"};
	PyObject *t = PyTuple_New(e->nfields);

	(void)closure;
	for (unsigned i = 0; t && i < e->nfields; i++) {
		PyObject *p = Py_BuildValue("(Os)", e->names[i], kinds[e->kinds[i]]);

		if (!p) {
			Py_DECREF(t);
			return NULL;
		}
		PyTuple_SET_ITEM(t, i, p);
	}
	return t;
}

static PyObject *event_repr(EventObject *e)
{
	return PyUnicode_FromFormat("<trail.event %U:%U (%U)%s>", e->system, e->name, e->definition,
				    __atomic_load_n(e->state, __ATOMIC_RELAXED) ? " enabled" : "");
}

static PyGetSetDef event_getset[] = {
	{"enabled", (getter)event_enabled, NULL, "True while a trail session records the event", NULL},
	{"fields", (getter)event_fields, NULL, "((name, kind), ...) of the event's fields", NULL},
	{NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef event_members[] = {
	{"system", T_OBJECT, offsetof(EventObject, system), READONLY, "its system (group)"},
	{"name", T_OBJECT, offsetof(EventObject, name), READONLY, "its name"},
	{"definition", T_OBJECT, offsetof(EventObject, definition), READONLY,
	 "its definition (user_events grammar)"},
	{"__vectorcalloffset__", T_PYSSIZET, offsetof(EventObject, vectorcall), READONLY, NULL},
	{NULL, 0, 0, 0, NULL},
};

static PyTypeObject EventType = {
	PyVarObject_HEAD_INIT(NULL, 0).tp_name = "trail.Event",
	.tp_basicsize = sizeof(EventObject),
	.tp_dealloc = (destructor)event_dealloc,
	.tp_vectorcall_offset = offsetof(EventObject, vectorcall),
	.tp_call = PyVectorcall_Call,
	.tp_repr = (reprfunc)event_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
	.tp_doc = "An event defined at run time: call it to write a record.",
	.tp_getset = event_getset,
	.tp_members = event_members,
};

/* event(system, name, **types) or event(system, "name type field; ...") */
static PyObject *mod_event(PyObject *mod, PyObject *args, PyObject *kw)
{
	const char *system, *name;
	PyObject *def = NULL;
	struct trail_uevent_err err = {0, ""};
	struct trail_uevent *ev;
	EventObject *e;
	const char *d;
	(void)mod;

	if (!PyArg_ParseTuple(args, "ss:event", &system, &name))
		return NULL;
	if (kw && PyDict_Size(kw)) {
		PyObject *k, *v;
		Py_ssize_t pos = 0;
		int first = 1;

		if (strchr(name, ' ')) {
			PyErr_SetString(PyExc_TypeError,
					"event(): a definition string, or a name and fields as keywords");
			return NULL;
		}
		def = PyUnicode_FromString(name);
		while (def && PyDict_Next(kw, &pos, &k, &v)) {
			PyObject *nd;

			if (!PyUnicode_Check(v)) {
				Py_DECREF(def);
				PyErr_Format(PyExc_TypeError, "event(): field '%U': its type as a str ('u32', "
					     "'string', 'double'...), not %.100s", k, Py_TYPE(v)->tp_name);
				return NULL;
			}
			nd = PyUnicode_FromFormat("%U%s%U %U", def, first ? " " : "; ", v, k);
			Py_DECREF(def);
			def = nd;
			first = 0;
		}
	} else {
		def = PyUnicode_FromString(name);
	}
	if (!def || !(d = PyUnicode_AsUTF8(def))) {
		Py_XDECREF(def);
		return NULL;
	}
	ev = trail_uevent_new(system, d, &err);
	if (!ev) {
		if (errno == EINVAL) {
			char pad[TRAIL_CARET_MAX + 1];
			int n = err.pos < 0 ? 0 : err.pos > TRAIL_CARET_MAX ? TRAIL_CARET_MAX : err.pos;

			memset(pad, ' ', (size_t)n);
			pad[n] = '\0';
			PyErr_Format(PyExc_ValueError, "%s:%s: %s\n  %s\n  %s^", system, d, err.msg, d, pad);
		}
		else if (errno == EADDRINUSE)
			PyErr_Format(PyExc_ValueError, "%s:%s: %s", system, d, err.msg);
		else
			PyErr_SetFromErrno(PyExc_OSError);
		Py_DECREF(def);
		return NULL;
	}
	e = PyObject_New(EventObject, &EventType);
	if (!e) {
		trail_uevent_free(ev);
		Py_DECREF(def);
		return NULL;
	}
	e->ev = ev;
	e->state = trail_uevent_state(ev);
	e->vectorcall = event_vectorcall;
	e->nfields = 0;
	e->definition = def;
	e->system = PyUnicode_FromString(system);
	e->name = NULL;
	{
		const char *sp = strchr(d, ' ');

		e->name = PyUnicode_FromStringAndSize(d, sp ? sp - d : (Py_ssize_t)strlen(d));
	}
	if (!e->system || !e->name) {
		Py_DECREF(e);
		return NULL;
	}
	for (unsigned i = 0; i < trail_uevent_nfields(ev) && i < MAX_FIELDS; i++) {
		const char *fname;

		trail_uevent_field(ev, i, &fname, &e->kinds[i], &e->sizes[i]);
		if (!(e->names[i] = PyUnicode_InternFromString(fname))) {
			Py_DECREF(e);
			return NULL;
		}
		e->nfields = i + 1;
	}
	return (PyObject *)e;
}

/*
 * _log(ev, record, asctime): a logging.LogRecord as LoggingHandler's event
 * (its fields: asctime, msg, logger_name, funcName, lineno, int_loglevel,
 * thread, threadName, pathname), read and written here rather than in
 * Python: the message as LogRecord.getMessage() makes it (str(msg) %
 * args), asctime None for the message itself. A record's attribute that
 * is missing or of another type is a TypeError or AttributeError, as
 * logging would raise.
 */
static PyObject *names_log[8];

static PyObject *mod_log(PyObject *mod, PyObject *const *args, Py_ssize_t nargs)
{
	static const char *const attrs[8] = {"msg", "args", "name", "funcName", "lineno", "levelno",
					     "thread", "threadName"};
	PyObject *vals[9] = {NULL}, *a[8] = {NULL}, *res = NULL, *msg = NULL;
	struct trail_uvalue v[9];
	EventObject *e;
	int i, r;
	(void)mod;

	if (nargs != 3 || !PyObject_TypeCheck(args[0], &EventType)) {
		PyErr_SetString(PyExc_TypeError, "_log(event, record, asctime)");
		return NULL;
	}
	e = (EventObject *)args[0];
	if (!__atomic_load_n(e->state, __ATOMIC_RELAXED))
		Py_RETURN_NONE;
	if (e->nfields != 9) {
		PyErr_SetString(PyExc_TypeError, "_log: not LoggingHandler's event");
		return NULL;
	}
	for (i = 0; i < 8; i++) {
		if (!names_log[i] && !(names_log[i] = PyUnicode_InternFromString(attrs[i])))
			goto out;
		if (!(a[i] = PyObject_GetAttr(args[1], names_log[i])))
			goto out;
	}
	if (!(msg = PyObject_Str(a[0])))
		goto out;
	if (PyObject_IsTrue(a[1]) == 1) { /* getMessage(): msg % args */
		PyObject *m = PyUnicode_Format(msg, a[1]);

		Py_DECREF(msg);
		if (!(msg = m))
			goto out;
	}
	vals[0] = args[2] == Py_None ? msg : args[2];
	vals[1] = msg;
	vals[2] = a[2];
	vals[3] = a[3];
	vals[4] = a[4];
	vals[5] = a[5];
	vals[6] = a[6] == Py_None ? NULL : a[6];
	vals[7] = a[7];
	{
		PyObject *path = PyObject_GetAttrString(args[1], "pathname");

		if (!path)
			goto out;
		vals[8] = path;
		for (i = 0; i < 9; i++) {
			PyObject *o = vals[i] ? vals[i] : Py_None;

			if (i == 6 && o == Py_None) { /* no thread id: 0 */
				v[i].i = 0;
				continue;
			}
			if (value_of(e, (unsigned)i, o, &v[i])) {
				Py_DECREF(path);
				goto out;
			}
		}
		r = trail_uevent_write(e->ev, v, 9);
		Py_DECREF(path);
	}
	if (r) {
		errno = -r;
		PyErr_SetFromErrno(PyExc_OSError);
		goto out;
	}
	res = Py_None;
	Py_INCREF(res);
out:
	Py_XDECREF(msg);
	for (i = 0; i < 8; i++)
		Py_XDECREF(a[i]);
	return res;
}

static PyMethodDef mod_methods[] = {
	{"_log", (PyCFunction)(void (*)(void))mod_log, METH_FASTCALL,
	 "_log(event, record, asctime): a logging record as trail.LoggingHandler writes it"},
	{"event", (PyCFunction)(void (*)(void))mod_event, METH_VARARGS | METH_KEYWORDS,
	 "event(system, name, **fields) -> Event\n"
	 "event(system, 'name type field; type field...') -> Event\n\n"
	 "Define an event at run time (the kernel's user_events grammar; types\n"
	 "u8..u64, s8..s64, int, char[N], string, bytes, bool, float, double)."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef trail_module = {
	PyModuleDef_HEAD_INIT, "_trail", "trail's events defined at run time", -1, mod_methods,
	NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__trail(void)
{
	PyObject *m;

	if (PyType_Ready(&EventType) < 0)
		return NULL;
	m = PyModule_Create(&trail_module);
	if (!m)
		return NULL;
	Py_INCREF(&EventType);
	if (PyModule_AddObject(m, "Event", (PyObject *)&EventType) < 0) {
		Py_DECREF(&EventType);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
