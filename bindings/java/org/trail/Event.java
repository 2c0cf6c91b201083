/* SPDX-License-Identifier: MIT */
package org.trail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A trail event defined at run time (trail/uevent.h through JNI): no
 * provider file, nothing generated. Recorded with
 * {@code trail record -e 'SYSTEM:NAME' -- java ...}.
 *
 * <pre>
 *   Event req = Event.define("java", "request u32 fd; string path; double ms; bool ok");
 *   ...
 *   if (req.isEnabled())
 *       req.emit(fd, path, ms, ok);
 * </pre>
 *
 * The definition is the kernel's user_events grammar ({@code NAME TYPE
 * FIELD; ...}) with trail's types besides: string, bytes, bool, float,
 * double. Values by field type:
 * <ul>
 * <li>integers (u8..u64, s8..s64, char, short, int ...): Integer, Long,
 * Short or Byte, in the field's range (an unsigned field also takes the
 * negative value of the same bits: -1 for 0xffffffff in a u32);</li>
 * <li>bool: Boolean;</li>
 * <li>float, double: Float or Double;</li>
 * <li>string, char[], char[N]: String (written as UTF-8) or null;</li>
 * <li>bytes, __data_loc arrays, struct: byte[] or null.</li>
 * </ul>
 * Any other value is an {@link IllegalArgumentException} naming the field,
 * whether or not the event is recorded.
 *
 * <p>Thread-safe: any thread may emit; closing an Event while another
 * thread emits it is the caller's bug (as in C). An Event not closed lives
 * until the process exits. The native library is libtrail_jni.so, found
 * through java.library.path, or at the path the system property
 * {@code org.trail.jni} names.
 */
public final class Event implements AutoCloseable {
	/* field kinds: enum trail_uevent_kind */
	static final int SIGNED = 1, UNSIGNED = 2, BOOL = 3, FLOAT = 4, STRING = 5, BYTES = 6;

	/* what a closed Event's status reads: 0 (read-only as the live ones
	 * are: one class at isEnabled's getInt) */
	private static final ByteBuffer OFF =
		ByteBuffer.allocateDirect(4).asReadOnlyBuffer().order(ByteOrder.nativeOrder());

	static {
		String path = System.getProperty("org.trail.jni");
		if (path != null && !path.isEmpty())
			System.load(path);
		else
			System.loadLibrary("trail_jni");
	}

	private final String system, name;
	private final String[] names;
	private final int[] kinds;
	private final int[] sizes;      /* char[N]: N */
	private final long[] lo, hi;    /* integer fields' ranges */
	private final boolean allInts;  /* every field an integer: emit(long...) direct */
	/* plain fields: emit and isEnabled racing close is the caller's bug */
	private long handle;            /* the C side's (0: closed) */
	private ByteBuffer status;      /* the status word (OFF: closed) */

	/**
	 * Define SYSTEM:NAME with fields given as type and name pairs:
	 * {@code new Event("java", "request", "u32", "fd", "string", "path")}.
	 *
	 * @throws IllegalArgumentException a bad definition, or NAME is
	 *         registered with other fields
	 */
	public Event(String system, String name, String... typeNamePairs) {
		this(system, definition(name, typeNamePairs));
	}

	/**
	 * Define an event from a whole definition: {@code
	 * Event.define("java", "request u32 fd; string path")}. A null system
	 * is user_events, the kernel's.
	 *
	 * @throws IllegalArgumentException a bad definition (its message says
	 *         where), or that name is registered with other fields
	 */
	public static Event define(String system, String definition) {
		return new Event(system, definition);
	}

	private static String definition(String name, String[] pairs) {
		if (name == null)
			throw new NullPointerException("name");
		if (pairs.length % 2 != 0)
			throw new IllegalArgumentException("fields come as type and name pairs: "
							   + pairs.length + " strings");
		StringBuilder b = new StringBuilder(name);
		for (int i = 0; i < pairs.length; i += 2)
			b.append(i == 0 ? " " : "; ").append(pairs[i]).append(' ').append(pairs[i + 1]);
		return b.toString();
	}

	private Event(String system, String definition) {
		if (definition == null)
			throw new NullPointerException("definition");
		long h = open(system, definition);
		int n = nfields(h);
		this.system = system == null ? "user_events" : system;
		this.names = new String[n];
		this.kinds = new int[n];
		this.sizes = new int[n];
		describe(h, names, kinds, sizes);
		String nm = definition.trim();
		int sp = nm.indexOf(' ');
		nm = sp < 0 ? nm : nm.substring(0, sp);
		sp = nm.indexOf(':'); /* NAME:FLAGS */
		this.name = sp < 0 ? nm : nm.substring(0, sp);
		this.lo = new long[n];
		this.hi = new long[n];
		boolean ints = true;
		for (int i = 0; i < n; i++) {
			int bits = 8 * sizes[i];
			if (kinds[i] == SIGNED || kinds[i] == UNSIGNED) {
				lo[i] = bits >= 64 ? Long.MIN_VALUE : -(1L << (bits - 1));
				hi[i] = bits >= 64 ? Long.MAX_VALUE
					: kinds[i] == UNSIGNED ? (1L << bits) - 1 : (1L << (bits - 1)) - 1;
			} else {
				ints = false;
			}
		}
		this.allInts = ints;
		this.status = state(h).asReadOnlyBuffer().order(ByteOrder.nativeOrder());
		this.handle = h;
	}

	/**
	 * Is a recording session recording this event? One load of its status
	 * word (a direct ByteBuffer over it), no native call: about a third of
	 * a nanosecond, for a guard around building the values.
	 */
	public boolean isEnabled() {
		/* A plain load, as C's relaxed one. The memory model promises a
		 * plain read no sight of another thread's write; HotSpot keeps a
		 * direct buffer's load in the loop (measured on OpenJDK 17: a hot
		 * counted loop warmed with the event off sees it turned on within
		 * the loop). VarHandle.getOpaque would promise it, at ~2 ns a
		 * load instead of ~0.3. */
		return status.getInt(0) != 0;
	}

	/** The system (the event's group), "java" in SYSTEM:NAME. */
	public String system() {
		return system;
	}

	/** The event's name. */
	public String name() {
		return name;
	}

	/** The number of fields. */
	public int fieldCount() {
		return names.length;
	}

	/** Field i's name. */
	public String fieldName(int i) {
		return names[i];
	}

	@Override
	public String toString() {
		return system + ":" + name;
	}

	private long live() {
		long h = handle;
		if (h == 0)
			throw new IllegalStateException(this + " is closed");
		return h;
	}

	/* (the value shown if it is a box or a String: no other toString run) */
	private IllegalArgumentException bad(int i, String want, Object v) {
		String shown = v == null ? "null" : v.getClass().getSimpleName();
		if (v instanceof Number || v instanceof Boolean || v instanceof Character)
			shown += " " + v;
		else if (v instanceof String)
			shown += " \"" + (((String) v).length() > 40 ? ((String) v).substring(0, 40) + "..." : v)
				+ "\"";
		return new IllegalArgumentException(this + ": field " + names[i] + " wants " + want
						    + ", not " + shown);
	}

	private void count(int n) {
		if (n != names.length)
			throw new IllegalArgumentException(this + " has " + names.length + " fields, not "
							   + n + " values");
	}

	private long integer(int i, long x) {
		if (x < lo[i] || x > hi[i])
			throw new IllegalArgumentException(this + ": field " + names[i] + " = " + x
				+ " is out of its range [" + lo[i] + ", "
				+ (kinds[i] == UNSIGNED && hi[i] == Long.MAX_VALUE ? "2^64-1" : "" + hi[i]) + "]");
		return x;
	}

	/*
	 * A record's values, laid out for the native write in a direct buffer
	 * of the thread's (no JNI call back for a value, nothing allocated):
	 * one 8-byte slot a field, in order (an integer or bool; a double's
	 * bits; a string's or byte[]'s offset << 32 | length, or -1 for null),
	 * then the strings' UTF-8 and the byte[]s' bytes.
	 */
	private static final class Scratch {
		ByteBuffer b;
		long addr;

		Scratch() {
			grow(16384, 0);
		}

		/* room for n bytes at at: a bigger buffer with the first at bytes */
		void room(int at, int n) {
			if ((long) at + n > b.capacity())
				grow((int) Math.min(Integer.MAX_VALUE - 8, Math.max(2L * b.capacity(), (long) at + n)), at);
		}

		void grow(int cap, int keep) {
			ByteBuffer nb = ByteBuffer.allocateDirect(cap).order(ByteOrder.nativeOrder());
			if (keep > 0) {
				ByteBuffer old = b.duplicate();
				old.position(0).limit(keep);
				nb.put(old);
			}
			b = nb;
			addr = address(nb);
		}
	}

	private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);
	private static final int STRING_MAX = 4095;  /* TRAIL_STRING_MAX: bytes kept of a string */
	private static final int BYTES_MAX = 65536;  /* bytes of a byte[] passed: past what any field keeps */

	/* s as UTF-8 into b at at, at most max bytes, whole characters only
	 * (an unpaired surrogate as U+FFFD; String.getBytes writes '?'): the
	 * bytes written */
	private static int utf8(ByteBuffer b, int at, String s, int max) {
		int o = at, end = at + max, n = s.length();
		for (int i = 0; i < n; i++) {
			int c = s.charAt(i);
			if (c < 0x80) {
				if (o + 1 > end)
					break;
				b.put(o++, (byte) c);
			} else if (c < 0x800) {
				if (o + 2 > end)
					break;
				b.put(o++, (byte) (0xc0 | c >> 6));
				b.put(o++, (byte) (0x80 | (c & 0x3f)));
			} else if (Character.isHighSurrogate((char) c) && i + 1 < n
				   && Character.isLowSurrogate(s.charAt(i + 1))) {
				if (o + 4 > end)
					break;
				c = Character.toCodePoint((char) c, s.charAt(++i));
				b.put(o++, (byte) (0xf0 | c >> 18));
				b.put(o++, (byte) (0x80 | (c >> 12 & 0x3f)));
				b.put(o++, (byte) (0x80 | (c >> 6 & 0x3f)));
				b.put(o++, (byte) (0x80 | (c & 0x3f)));
			} else {
				if (Character.isSurrogate((char) c))
					c = 0xfffd;
				if (o + 3 > end)
					break;
				b.put(o++, (byte) (0xe0 | c >> 12));
				b.put(o++, (byte) (0x80 | (c >> 6 & 0x3f)));
				b.put(o++, (byte) (0x80 | (c & 0x3f)));
			}
		}
		return o - at;
	}

	/**
	 * Write one record: one value per field, in order, of the field's
	 * type (see the class). Nothing is written (and no native call made)
	 * while the event is not recorded; the values are checked either way.
	 *
	 * @throws IllegalArgumentException a value of the wrong type or
	 *         range for its field (the message names it), or the wrong
	 *         count of values
	 * @throws IllegalStateException the Event is closed
	 */
	public void emit(Object... values) {
		int n = names.length;
		count(values.length);
		long h = live();
		/* not recorded: the values checked, nothing laid out */
		Scratch s = isEnabled() ? SCRATCH.get() : null;
		ByteBuffer b = s == null ? null : s.b;
		int at = 8 * n;
		if (s != null) {
			s.room(0, at);
			b = s.b;
		}
		for (int i = 0; i < n; i++) {
			Object v = values[i];
			long x;
			switch (kinds[i]) {
			case SIGNED:
			case UNSIGNED:
				if (v instanceof Integer || v instanceof Long || v instanceof Short
				    || v instanceof Byte)
					x = integer(i, ((Number) v).longValue());
				else
					throw bad(i, "an integer (Integer, Long, Short, Byte)", v);
				break;
			case BOOL:
				if (!(v instanceof Boolean))
					throw bad(i, "a Boolean", v);
				x = (Boolean) v ? 1 : 0;
				break;
			case FLOAT:
				if (v instanceof Double)
					x = Double.doubleToRawLongBits((Double) v);
				else if (v instanceof Float)
					x = Double.doubleToRawLongBits((Float) v);
				else
					throw bad(i, "a Double or Float", v);
				break;
			case STRING:
				if (v != null && !(v instanceof String))
					throw bad(i, "a String", v);
				x = -1;
				if (s != null && v != null) {
					String str = (String) v;
					int max = sizes[i] > 0 ? Math.min(sizes[i], STRING_MAX) : STRING_MAX;
					/* 3 bytes a UTF-16 unit at most (a pair's 4 for two) */
					max = (int) Math.min(max, 3L * str.length());
					s.room(at, max);
					b = s.b;
					int len = utf8(b, at, str, max);
					x = (long) at << 32 | len;
					at += len;
				}
				break;
			default: /* BYTES */
				if (v != null && !(v instanceof byte[]))
					throw bad(i, "a byte[]", v);
				x = -1;
				if (s != null && v != null) {
					byte[] a = (byte[]) v;
					int len = Math.min(a.length, BYTES_MAX);
					s.room(at, len);
					b = s.b;
					b.position(at);
					b.put(a, 0, len);
					x = (long) at << 32 | len;
					at += len;
				}
				break;
			}
			if (s != null)
				b.putLong(8 * i, x);
		}
		if (s != null)
			write(h, s.addr);
	}

	/** An event of no fields. */
	public void emit() {
		count(0);
		long h = live();
		if (isEnabled())
			write0(h);
	}

	/**
	 * One integer field: no boxing, no array. Of other fields, the same
	 * as {@code emit((Object) a)}.
	 */
	public void emit(long a) {
		if (!allInts || names.length != 1) {
			emit(new Object[] {a});
			return;
		}
		integer(0, a);
		long h = live();
		if (isEnabled())
			write1(h, a);
	}

	/** Two integer fields: no boxing, no array. */
	public void emit(long a, long b) {
		if (!allInts || names.length != 2) {
			emit(new Object[] {a, b});
			return;
		}
		integer(0, a);
		integer(1, b);
		long h = live();
		if (isEnabled())
			write2(h, a, b);
	}

	/** Three integer fields: no boxing, no array. */
	public void emit(long a, long b, long c) {
		if (!allInts || names.length != 3) {
			emit(new Object[] {a, b, c});
			return;
		}
		integer(0, a);
		integer(1, b);
		integer(2, c);
		long h = live();
		if (isEnabled())
			write3(h, a, b, c);
	}

	/**
	 * Give the event back (trail_uevent_free): it is deleted when no other
	 * handle (another Event of the same definition, in Java or C) has it.
	 * isEnabled() is false after; emit() throws. Closing twice is nothing.
	 */
	@Override
	public synchronized void close() {
		long h = handle;
		if (h == 0)
			return;
		status = OFF;
		handle = 0;
		free(h);
	}

	/* libtrail_jni.so (trail_jni.c) */
	private static native long open(String system, String definition);
	private static native ByteBuffer state(long h);
	private static native int nfields(long h);
	private static native void describe(long h, String[] names, int[] kinds, int[] sizes);
	private static native long address(ByteBuffer b);
	private static native void write(long h, long values);
	private static native void write0(long h);
	private static native void write1(long h, long a);
	private static native void write2(long h, long a, long b);
	private static native void write3(long h, long a, long b, long c);
	private static native void free(long h);
}
