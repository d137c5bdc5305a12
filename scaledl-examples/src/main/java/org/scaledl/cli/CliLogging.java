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

    /** The most warnings kept for {@link #warningsSince} (a command that logs more keeps its first ones). */
    private static final int KEPT = 1000;

    /** The libraries' warnings so far (not ND4J's), in order, for a command that reports them in its JSON too. */
    private static final List<String> WARNINGS = new ArrayList<>();

    /** Where the warnings logged from now on start: pass it to {@link #warningsSince}. */
    static int mark() {
        synchronized (WARNINGS) {
            return WARNINGS.size();
        }
    }

    /** The libraries' warnings logged since {@code mark} ({@link #mark()}), in order. */
    static List<String> warningsSince(int mark) {
        synchronized (WARNINGS) {
            return List.copyOf(WARNINGS.subList(Math.min(mark, WARNINGS.size()), WARNINGS.size()));
        }
    }

    private static void keep(String warning) {
        synchronized (WARNINGS) {
            if (WARNINGS.size() < KEPT) {
                WARNINGS.add(warning);
            }
        }
    }

    /** The line a log event prints as (without its newline). */
    static String line(Level level, String message, Throwable thrown) {
        String text = thrown == null ? message : message + " (" + thrown.getClass().getSimpleName()
                + (thrown.getMessage() == null ? "" : ": " + thrown.getMessage()) + ")";
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

        CliLogger(String name) {
            this.name = name;
            String n = name.toLowerCase(Locale.ROOT);
            this.library = n.startsWith("org.nd4j") || n.startsWith("org.bytedeco");
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
            if (level == Level.WARN && !library) {
                keep(line(level, message, thrown).substring("scaledl: warning: ".length()));
            }
            System.err.println(line(level, message, thrown));
        }
    }
}
