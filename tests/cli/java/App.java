/* SPDX-License-Identifier: MIT */
/*
 * tests/cli/java/App.java - what tests/cli/test-java.sh runs: the Java
 * binding (bindings/java) used as an application does.
 *
 *   App N          java:request N times, each guarded by isEnabled(), then
 *                  java:done with the count written
 *   App logging    java.util.logging through org.trail.LoggingHandler
 *   App types      java:text's values of every kind, then wrong values
 *   App bench N    ns per isEnabled() (java:off) and per emit()
 *                  (java:request, java:pair), N times each, the best of
 *                  5 rounds (doc/languages.md's figures)
 */
import java.util.logging.Level;
import java.util.logging.Logger;

import org.trail.Event;
import org.trail.LoggingHandler;

public class App {
	static Event request() {
		return Event.define("java", "request u32 fd; string path; double ms; bool ok");
	}

	static void requests(int n) {
		try (Event req = request(); Event done = new Event("java", "done", "u32", "wrote")) {
			int wrote = 0;
			for (int i = 0; i < n; i++) {
				if (req.isEnabled()) {
					req.emit(i, "/x/" + i, i * 0.25, i % 2 == 0);
					wrote++;
				}
			}
			if (done.isEnabled())
				done.emit(wrote);
			System.out.println("wrote " + wrote);
		}
	}

	static void logging() {
		Logger log = Logger.getLogger("app.web");
		LoggingHandler h = new LoggingHandler();
		log.setUseParentHandlers(false);
		log.addHandler(h);
		log.info("started");
		log.log(Level.WARNING, "disk {0}% full on {1}", new Object[] {93, "/var"});
		log.fine("not logged: FINE is below the logger's INFO");
		log.severe("stopping");
		System.out.println("logging enabled=" + h.isEnabled());
		h.close();
	}

	static void tryEmit(Event ev, Object... values) {
		try {
			ev.emit(values);
			System.out.println("accepted");
		} catch (IllegalArgumentException e) {
			System.out.println("IAE: " + e.getMessage());
		}
	}

	static void types() {
		try (Event text = new Event("java", "text", "string", "s", "bytes", "b", "s8", "c",
					    "u64", "big", "float", "f", "char[4]", "tag")) {
			text.emit("é€\uD83D\uDE00 \"q\"", new byte[] {1, 2, (byte) 0xff}, (byte) -5, -1L,
				  0.5f, "abcdef");
			text.emit(null, null, (short) 127, Long.MAX_VALUE, 2.0f, "x");
		}
		try (Event pair = Event.define("java", "pair u64 a; s16 b")) {
			pair.emit(7, -2);
			tryEmit(pair, 7, 40000);
		}
		try (Event req = request()) {
			tryEmit(req, "3", "/x", 1.0, true);
			tryEmit(req, 3, 4, 1.0, true);
			tryEmit(req, 3, "/x", 1, true);
			tryEmit(req, 3, "/x", 1.0, 1);
			tryEmit(req, 1L << 32, "/x", 1.0, true);
			tryEmit(req, -1, "/x", 1.0, true);
			tryEmit(req, 3, "/x", 1.0);
			try {
				Event.define("java", "broken u32 fd; u33 x");
			} catch (IllegalArgumentException e) {
				System.out.println("IAE: " + e.getMessage());
			}
			try {
				Event.define("java", "request u64 fd");
			} catch (IllegalArgumentException e) {
				System.out.println("IAE: " + e.getMessage());
			}
		}
	}

	static double per(long t0, long n) {
		return (System.nanoTime() - t0) / (double) n;
	}

	static void bench(int n) {
		try (Event off = Event.define("java", "off u32 x"); Event req = request();
		     Event pair = Event.define("java", "pair u64 a; u64 b")) {
			long hits = 0;
			double a = 1e9, b = 1e9, c = 1e9;
			for (int round = 0; round < 5; round++) { /* the best: JIT-compiled */
				long t0 = System.nanoTime();
				for (int i = 0; i < n; i++)
					if (off.isEnabled())
						hits++;
				a = Math.min(a, per(t0, n));
				t0 = System.nanoTime();
				for (int i = 0; i < n; i++)
					req.emit(i, "/x", 1.5, true);
				b = Math.min(b, per(t0, n));
				t0 = System.nanoTime();
				for (int i = 0; i < n; i++)
					pair.emit(i, 2L);
				c = Math.min(c, per(t0, n));
			}
			System.out.printf("isEnabled(off) %.2f ns, emit(request) %.1f ns, emit(pair) %.1f ns,"
					  + " enabled %b %b %b hits %d%n", a, b, c, off.isEnabled(),
					  req.isEnabled(), pair.isEnabled(), hits);
		}
	}

	public static void main(String[] args) {
		switch (args[0]) {
		case "logging":
			logging();
			break;
		case "types":
			types();
			break;
		case "bench":
			bench(Integer.parseInt(args[1]));
			break;
		default:
			requests(Integer.parseInt(args[0]));
			break;
		}
	}
}
