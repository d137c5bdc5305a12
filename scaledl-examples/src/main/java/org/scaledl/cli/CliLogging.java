package org.scaledl.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.helpers.NOPMDCAdapter;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * The command line's SLF4J binding: the libraries' log lines in the command line's own form on the standard error
 * stream, so that a warning reads the same whoever raised it. A warning prints as {@code scaledl: warning: ...}, an
 * error as {@code scaledl: error: ...}, information as its bare message (left out with {@code -q}, as the command
 * line's progress is); debug and trace are off. ND4J and its native loaders (the GNN stage's backend) log below
 * warnings only to their developers, so only their warnings and errors are shown. Each line goes to the standard
 * error stream as it is then ({@link System#err}), so a caller that redirects it sees the lines.
 *
 * <p>Registered in {@code META-INF/services/org.slf4j.spi.SLF4JServiceProvider}; the library modules log through
 * the SLF4J API only and never pick a binding.
 */
public final class CliLogging implements SLF4JServiceProvider {
    private final IMarkerFactory markers = new BasicMarkerFactory();
    private final MDCAdapter mdc = new NOPMDCAdapter();
    private final ILoggerFactory loggers = CliLogger::new;

    @Override
    public ILoggerFactory getLoggerFactory() {
        return loggers;
    }

    @Override
    public IMarkerFactory getMarkerFactory() {
        return markers;
    }

    @Override
    public MDCAdapter getMDCAdapter() {
        return mdc;
    }

    @Override
    public String getRequestedApiVersion() {
        return "2.0.99";
    }

    @Override
    public void initialize() {
        // nothing to set up: every logger reads the quiet flag and the error stream when it writes
    }

    /** The most warnings a recording keeps (a command that logs more keeps its first ones). */
    private static final int KEPT = 1000;

    /**
     * The warnings of the readers of configurations and tables ({@code org.scaledl.transformer},
     * {@code org.scaledl.io}) since {@link #record()}, in order, for a command that reports them in its JSON too (an
     * ONNX graph's partial import and fixed batch are its prediction's own warnings already).
     */
    private static final List<String> RECORDED = new ArrayList<>();

    /** Starts a recording of the readers' warnings: what was recorded before is dropped. */
    static void record() {
        synchronized (RECORDED) {
            RECORDED.clear();
        }
    }

    /** The readers' warnings logged since {@link #record()}, in order. */
    static List<String> recorded() {
        synchronized (RECORDED) {
            return List.copyOf(RECORDED);
        }
    }

    private static void keep(String warning) {
        synchronized (RECORDED) {
            if (RECORDED.size() < KEPT) {
                RECORDED.add(warning);
            }
        }
    }

    /** A log event's message, with its exception's class and message where it has one. */
    private static String text(String message, Throwable thrown) {
        return thrown == null ? message : message + " (" + thrown.getClass().getSimpleName()
                + (thrown.getMessage() == null ? "" : ": " + thrown.getMessage()) + ")";
    }

    /** The line a log event prints as (without its newline). */
    static String line(Level level, String message, Throwable thrown) {
        String text = text(message, thrown);
        return switch (level) {
            case ERROR -> "scaledl: error: " + text;
            case WARN -> "scaledl: warning: " + text;
            default -> text;
        };
    }

    /** One named logger: warnings and errors always, information unless quiet (and not from ND4J's libraries). */
    private static final class CliLogger extends LegacyAbstractLogger {
        private static final long serialVersionUID = 1L;
        private final boolean library;
        private final boolean reader;

        CliLogger(String name) {
            this.name = name;
            String n = name.toLowerCase(Locale.ROOT);
            this.library = n.startsWith("org.nd4j") || n.startsWith("org.bytedeco");
            this.reader = n.startsWith("org.scaledl.transformer.") || n.startsWith("org.scaledl.io.");
        }

        @Override
        public boolean isTraceEnabled() {
            return false;
        }

        @Override
        public boolean isDebugEnabled() {
            return false;
        }

        @Override
        public boolean isInfoEnabled() {
            return !library && !Main.quiet;
        }

        @Override
        public boolean isWarnEnabled() {
            return true;
        }

        @Override
        public boolean isErrorEnabled() {
            return true;
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments,
                Throwable thrown) {
            String message = MessageFormatter.basicArrayFormat(pattern, arguments);
            if (level == Level.WARN && reader) {
                keep(text(message, thrown));
            }
            System.err.println(line(level, message, thrown));
        }
    }
}
