/* SPDX-License-Identifier: MIT */
package org.trail;

import java.util.logging.ErrorManager;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/**
 * A java.util.logging handler writing each record it is given as the
 * trail event {@code java:logging}:
 *
 * <pre>
 *   Logger.getLogger("").addHandler(new org.trail.LoggingHandler());
 *   // trail record -e java:logging -- java ...
 * </pre>
 *
 * Its fields are those of LTTng-UST's JUL agent's event, lttng_jul:event,
 * by name and type, followed from lttng-ust's
 * src/lib/lttng-ust-java-agent/jni/jul/lttng_ust_jul.h (the recorded
 * field names of its LTTNG_UST_TP_FIELDS, not its argument names: millis,
 * log_level and thread_id are recorded as long_millis, int_loglevel and
 * int_threadid) and the values its LttngLogHandler.publish passes:
 *
 * <pre>
 *   string msg          Formatter.formatMessage(record): the message, its {0} parameters filled in
 *   string logger_name  record.getLoggerName()
 *   string class_name   record.getSourceClassName()
 *   string method_name  record.getSourceMethodName()
 *   s64 long_millis     record.getMillis()
 *   s32 int_loglevel    record.getLevel().intValue() (INFO 800, WARNING 900, SEVERE 1000)
 *   s32 int_threadid    record.getThreadID()
 * </pre>
 *
 * A record is formatted and written only while a session records
 * java:logging (and the handler's level and filter let it through): an
 * unrecorded log call costs one load more than the logger's own work.
 */
public class LoggingHandler extends Handler {
	/** The definition of java:logging. */
	public static final String DEFINITION = "logging string msg; string logger_name; "
		+ "string class_name; string method_name; s64 long_millis; s32 int_loglevel; "
		+ "s32 int_threadid";

	/* only for its formatMessage, as LTTng's handler does */
	private static final Formatter MESSAGE = new Formatter() {
		@Override
		public String format(LogRecord record) {
			throw new UnsupportedOperationException();
		}
	};

	private final Event event;

	/** A handler of every level; its event registered now. */
	public LoggingHandler() {
		event = Event.define("java", DEFINITION);
		setLevel(Level.ALL);
	}

	/** Is java:logging recorded? */
	public boolean isEnabled() {
		return event.isEnabled();
	}

	@Override
	@SuppressWarnings("deprecation") /* getThreadID: LTTng's int thread id */
	public void publish(LogRecord record) {
		if (record == null || !event.isEnabled() || !isLoggable(record))
			return;
		String msg;
		try {
			msg = MESSAGE.formatMessage(record);
		} catch (RuntimeException e) {
			reportError(null, e, ErrorManager.FORMAT_FAILURE);
			msg = record.getMessage();
		}
		Level level = record.getLevel();
		try {
			event.emit(msg, record.getLoggerName(), record.getSourceClassName(),
				   record.getSourceMethodName(), record.getMillis(),
				   level == null ? 0 : level.intValue(), record.getThreadID());
		} catch (IllegalStateException e) {
			/* closed meanwhile */
		}
	}

	@Override
	public void flush() {
	}

	/** Give the event back (Event.close). */
	@Override
	public void close() {
		event.close();
	}
}
