package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The command line's SLF4J binding: the libraries' warnings and errors in the command line's form, information bare
 * and left out with {@code -q}, ND4J's below warnings never, and every line on the standard error stream as it is
 * when written.
 */
class CliLoggingTest {
    @Test
    void linesTakeTheCommandLinesForm() {
        assertEquals("scaledl: warning: a b", CliLogging.line(Level.WARN, "a b", null));
        assertEquals("scaledl: error: x (IllegalStateException: why)", CliLogging.line(Level.ERROR, "x",
                new IllegalStateException("why")));
        assertEquals("rows used", CliLogging.line(Level.INFO, "rows used", null));
    }

    @Test
    void theBindingIsThisOneAndWritesToTheCurrentErrorStream() {
        assertTrue(LoggerFactory.getILoggerFactory().getClass().getName().startsWith(CliLogging.class.getName()),
                LoggerFactory.getILoggerFactory().getClass().getName());
        PrintStream before = System.err;
        boolean quiet = Main.quiet;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        try {
            System.setErr(new PrintStream(buffer, true, StandardCharsets.UTF_8));
            Logger ours = LoggerFactory.getLogger("org.scaledl.io.Probe");
            Logger nd4j = LoggerFactory.getLogger("org.nd4j.linalg.factory.Nd4jBackend");
            Main.quiet = false;
            ours.warn("{} of {} rows", 3, 4);
            ours.info("progress {}", 1);
            ours.debug("never");
            nd4j.info("backend chatter");
            nd4j.warn("backend trouble");
            Main.quiet = true;
            ours.info("progress {}", 2);
            ours.error("broken");
        } finally {
            System.setErr(before);
            Main.quiet = quiet;
        }
        String err = buffer.toString(StandardCharsets.UTF_8);
        assertEquals(String.join(System.lineSeparator(), "scaledl: warning: 3 of 4 rows", "progress 1",
                "scaledl: warning: backend trouble", "scaledl: error: broken") + System.lineSeparator(), err);
        assertFalse(err.contains("never") || err.contains("chatter") || err.contains("progress 2"), err);
    }
}
