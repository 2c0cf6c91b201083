/* SPDX-License-Identifier: MIT */
/*
 * trail_jni.c - libtrail_jni.so, the native side of org.trail.Event
 * (bindings/java/org/trail/Event.java): trail/uevent.h for Java.
 *
 * A handle is a struct jev: the trail_uevent and its fields' kinds and
 * sizes, read once. Java checks the values' types against them and lays a
 * record's values out in a direct buffer of its thread (Event.emit: an
 * 8-byte slot a field, then the strings' UTF-8 and the byte[]s' bytes);
 * write() turns the slots into struct trail_uvalue: no call back into the
 * JVM for a value, nothing allocated. emit(long...) of integer fields
 * passes them as arguments (write1..3).
 *
 * The status word is given to Java as a direct ByteBuffer over its 4 bytes
 * (trail_uevent_state): Event.isEnabled() loads it without calling here.
 */
#include <errno.h>
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trail/uevent.h>

struct jev {
	struct trail_uevent *ev;
	unsigned n;
	struct {
		uint8_t kind;
		uint32_t size;
	} f[];
};

#define MAX_FIELDS 128     /* the definitions' most (src/common/uevent.h) */

static void throw_new(JNIEnv *env, const char *cls, const char *msg)
{
	jclass c = (*env)->FindClass(env, cls);

	if (c) /* (else FindClass's NoClassDefFoundError is pending) */
		(*env)->ThrowNew(env, c, msg);
}

static struct jev *jev_of(jlong h)
{
	return (struct jev *)(intptr_t)h;
}

JNIEXPORT jlong JNICALL Java_org_trail_Event_open(JNIEnv *env, jclass cls, jstring jsystem,
						  jstring jdef)
{
	struct trail_uevent_err err = {0, ""};
	const char *system = NULL, *def;
	struct trail_uevent *ev;
	struct jev *j = NULL;
	char msg[512];
	int e;

	(void)cls;
	if (jsystem && !(system = (*env)->GetStringUTFChars(env, jsystem, NULL)))
		return 0;
	if (!(def = (*env)->GetStringUTFChars(env, jdef, NULL))) {
		if (system)
			(*env)->ReleaseStringUTFChars(env, jsystem, system);
		return 0;
	}
	ev = trail_uevent_new(system, def, &err);
	e = errno;
	if (!ev) {
		if (e == EINVAL) {
			snprintf(msg, sizeof(msg), "bad definition \"%s\" at byte %d: %s", def, err.pos,
				 err.msg);
			throw_new(env, "java/lang/IllegalArgumentException", msg);
		} else if (e == EADDRINUSE) {
			snprintf(msg, sizeof(msg), "%s: %s (\"%s\")", system ? system : "user_events",
				 err.msg[0] ? err.msg : "an event of that name has other fields", def);
			throw_new(env, "java/lang/IllegalArgumentException", msg);
		} else if (e == ENOMEM) {
			throw_new(env, "java/lang/OutOfMemoryError", "trail_uevent_new");
		} else {
			snprintf(msg, sizeof(msg), "trail_uevent_new(\"%s\"): %s", def, strerror(e));
			throw_new(env, "java/lang/IllegalStateException", msg);
		}
	} else {
		unsigned n = trail_uevent_nfields(ev);

		if (n > MAX_FIELDS) { /* (write's arrays) */
			trail_uevent_free(ev);
			throw_new(env, "java/lang/IllegalArgumentException", "more than 128 fields");
		} else if (!(j = malloc(sizeof(*j) + n * sizeof(j->f[0])))) {
			trail_uevent_free(ev);
			throw_new(env, "java/lang/OutOfMemoryError", "trail_jni");
		} else {
			j->ev = ev;
			j->n = n;
			for (unsigned i = 0; i < n; i++) {
				enum trail_uevent_kind k = TRAIL_UEVENT_BYTES;
				unsigned size = 0;

				trail_uevent_field(ev, i, NULL, &k, &size);
				j->f[i].kind = (uint8_t)k;
				j->f[i].size = size;
			}
		}
	}
	(*env)->ReleaseStringUTFChars(env, jdef, def);
	if (system)
		(*env)->ReleaseStringUTFChars(env, jsystem, system);
	return (jlong)(intptr_t)j;
}

JNIEXPORT jobject JNICALL Java_org_trail_Event_state(JNIEnv *env, jclass cls, jlong h)
{
	(void)cls;
	/* (Event makes it a read-only buffer: it only loads it) */
	return (*env)->NewDirectByteBuffer(env, (void *)(uintptr_t)trail_uevent_state(jev_of(h)->ev),
					   4);
}

JNIEXPORT jint JNICALL Java_org_trail_Event_nfields(JNIEnv *env, jclass cls, jlong h)
{
	(void)env, (void)cls;
	return (jint)jev_of(h)->n;
}

JNIEXPORT void JNICALL Java_org_trail_Event_describe(JNIEnv *env, jclass cls, jlong h,
						     jobjectArray names, jintArray kinds,
						     jintArray sizes)
{
	struct jev *j = jev_of(h);

	(void)cls;
	for (unsigned i = 0; i < j->n; i++) {
		const char *name = "";
		jint k = j->f[i].kind, s = (jint)j->f[i].size;
		jstring js;

		trail_uevent_field(j->ev, i, &name, NULL, NULL);
		if (!(js = (*env)->NewStringUTF(env, name)))
			return;
		(*env)->SetObjectArrayElement(env, names, (jsize)i, js);
		(*env)->DeleteLocalRef(env, js);
		(*env)->SetIntArrayRegion(env, kinds, (jsize)i, 1, &k);
		(*env)->SetIntArrayRegion(env, sizes, (jsize)i, 1, &s);
	}
}

JNIEXPORT void JNICALL Java_org_trail_Event_free(JNIEnv *env, jclass cls, jlong h)
{
	struct jev *j = jev_of(h);

	(void)env, (void)cls;
	trail_uevent_free(j->ev);
	free(j);
}

JNIEXPORT jlong JNICALL Java_org_trail_Event_address(JNIEnv *env, jclass cls, jobject buf)
{
	(void)cls;
	return (jlong)(intptr_t)(*env)->GetDirectBufferAddress(env, buf);
}

/* one record from the values Event.emit laid out at addr: a slot of 8
 * bytes a field (an integer, a double's bits, or a string's or bytes'
 * offset from addr << 32 | length, all ones for null), then their bytes */
JNIEXPORT void JNICALL Java_org_trail_Event_write(JNIEnv *env, jclass cls, jlong h, jlong addr)
{
	const char *base = (const char *)(intptr_t)addr;
	struct trail_uvalue v[MAX_FIELDS];
	struct jev *j = jev_of(h);

	(void)env, (void)cls;
	for (unsigned i = 0; i < j->n; i++) {
		uint64_t x;

		memcpy(&x, base + 8 * i, 8);
		switch (j->f[i].kind) {
		case TRAIL_UEVENT_FLOAT:
			memcpy(&v[i].d, &x, sizeof(double));
			break;
		case TRAIL_UEVENT_STRING:
		case TRAIL_UEVENT_BYTES:
			v[i].p = x == UINT64_MAX ? NULL : base + (x >> 32);
			v[i].len = x == UINT64_MAX ? 0 : (uint32_t)x;
			break;
		default:
			v[i].u = x;
			break;
		}
	}
	trail_uevent_write(j->ev, v, j->n);
}

JNIEXPORT void JNICALL Java_org_trail_Event_write0(JNIEnv *env, jclass cls, jlong h)
{
	(void)env, (void)cls;
	trail_uevent_write(jev_of(h)->ev, NULL, 0);
}

JNIEXPORT void JNICALL Java_org_trail_Event_write1(JNIEnv *env, jclass cls, jlong h, jlong a)
{
	struct trail_uvalue v[1] = {{.i = a}};

	(void)env, (void)cls;
	trail_uevent_write(jev_of(h)->ev, v, 1);
}

JNIEXPORT void JNICALL Java_org_trail_Event_write2(JNIEnv *env, jclass cls, jlong h, jlong a,
						   jlong b)
{
	struct trail_uvalue v[2] = {{.i = a}, {.i = b}};

	(void)env, (void)cls;
	trail_uevent_write(jev_of(h)->ev, v, 2);
}

JNIEXPORT void JNICALL Java_org_trail_Event_write3(JNIEnv *env, jclass cls, jlong h, jlong a,
						   jlong b, jlong c)
{
	struct trail_uvalue v[3] = {{.i = a}, {.i = b}, {.i = c}};

	(void)env, (void)cls;
	trail_uevent_write(jev_of(h)->ev, v, 3);
}
