package org.scaledl;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The one exception type for bad input data: a malformed ONNX file, a graph with a cycle or a dangling tensor, a CSV
 * with a missing column, a non-finite measurement. It names where the problem is (file, line, node) so that a user can
 * fix the input without a debugger.
 *
 * <pre>{@code
 * try {
 *     ModelGraph g = OnnxImporter.read(path);
 * } catch (InvalidInputException e) {
 *     log.error("{} (node {})", e.getMessage(), e.node().orElse("-"));
 * }
 * }</pre>
 *
 * <p>Bad arguments to an API call (a negative batch size) are {@link IllegalArgumentException}s instead; this type is
 * for bad <em>data</em>.
 */
public final class InvalidInputException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String detail;
    private final String source;
    private final long line;
    private final String node;

    private InvalidInputException(String message, String source, long line, String node, Throwable cause) {
        super(compose(message, source, line, node), cause);
        this.detail = message;
        this.source = source;
        this.line = line;
        this.node = node;
    }

    private static String compose(String message, String source, long line, String node) {
        StringBuilder sb = new StringBuilder();
        if (source != null) {
            // a file's name is one line of the message, whatever characters it holds
            sb.append(escaped(source));
            if (line > 0) {
                sb.append(':').append(line);
            }
            sb.append(": ");
        }
        if (node != null) {
            sb.append("node '").append(node).append("': ");
        }
        return sb.append(message).toString();
    }

    /**
     * A value read from input as it may appear in a message: control and non-ASCII characters as their escapes, such as
     * <code>&#92;uff14</code> for a full-width 4 (no terminal escapes reach the screen, and the reader sees what was
     * wrong), cut at {@code max} characters shown with {@code ...}.
     */
    public static String printable(String value, int max) {
        String v = value == null ? "" : value;
        // each other character as its escape (a full-width 4 as backslash-u ff14): a message shows what was wrong;
        // the cut counts what is shown, escapes included
        StringBuilder b = new StringBuilder(Math.min(v.length(), max) + 3);
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            String shown = c >= 0x20 && c <= 0x7e ? String.valueOf(c)
                    : String.format(java.util.Locale.ROOT, "\\u%04x", (int) c);
            if (b.length() + shown.length() > max) {
                return b.append("...").toString();
            }
            b.append(shown);
        }
        return b.toString();
    }

    /**
     * Text as it may reach a terminal or a log: each character that can forge or hide output (C0 controls, DEL, C1
     * controls, the line and paragraph separators U+2028 and U+2029, the bidirectional overrides and isolates
     * U+202A–U+202E and U+2066–U+2069) as a visible escape such as <code>&#92;u001b</code>; every other character as
     * it is.
     */
    public static String escaped(String text) {
        int first = -1;
        for (int i = 0; i < text.length(); i++) {
            if (unsafe(text.charAt(i))) {
                first = i;
                break;
            }
        }
        if (first < 0) {
            return text;
        }
        StringBuilder b = new StringBuilder(text.length() + 16).append(text, 0, first);
        for (int i = first; i < text.length(); i++) {
            char c = text.charAt(i);
            if (unsafe(c)) {
                b.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /** True for the characters {@link #escaped} escapes. */
    public static boolean unsafe(char c) {
        return c < 0x20 || c >= 0x7f && c <= 0x9f || c == 0x2028 || c == 0x2029 || c >= 0x202a && c <= 0x202e
                || c >= 0x2066 && c <= 0x2069;
    }

    /** A problem in no particular file. */
    public static InvalidInputException of(String message) {
        return new InvalidInputException(message, null, 0, null, null);
    }

    /** A problem in a file (or other named source), anywhere in it. */
    public static InvalidInputException inSource(String source, String message) {
        return new InvalidInputException(message, source, 0, null, null);
    }

    /** A problem at a 1-based line of a text file. */
    public static InvalidInputException atLine(String source, long line, String message) {
        return new InvalidInputException(message, source, line, null, null);
    }

    /** A problem at a named graph node; {@code source} may be {@code null} for graphs built in memory. */
    public static InvalidInputException atNode(String source, String node, String message) {
        return new InvalidInputException(message, source, 0, node, null);
    }

    /** Returns a copy of this exception that also names {@code newSource} (when it named none) and keeps the cause. */
    public InvalidInputException withSource(String newSource) {
        if (source != null) {
            return this;
        }
        return new InvalidInputException(detail, newSource, line, node, getCause());
    }

    /** Same problem, with an underlying cause attached. */
    public static InvalidInputException wrap(String source, String message, Throwable cause) {
        return new InvalidInputException(message, source, 0, null, cause);
    }

    /**
     * A file that cannot be read: "no such file", "permission denied", or the I/O error's own message, as
     * {@code what} (e.g. "cannot read model") followed by the reason.
     */
    public static InvalidInputException unreadable(Path file, String what, IOException cause) {
        String reason;
        if (cause instanceof NoSuchFileException) {
            reason = "no such file";
        } else if (java.nio.file.Files.isDirectory(file)) {
            reason = "it is a directory";
        } else if (cause instanceof AccessDeniedException) {
            reason = "permission denied";
        } else {
            reason = String.valueOf(cause.getMessage());
        }
        return wrap(file.toString(), what + ": " + reason, cause);
    }

    /**
     * Text that is not valid JSON: {@code what} (e.g. "not a machine description") followed by where the parser
     * stopped, as {@code (invalid JSON at line L, column C: reason)}. Jackson's own naming of the source
     * ({@code [Source: REDACTED ...; line: 7, column: 21]}) becomes {@code line 7, column 21}: the file is
     * {@code source}. A token the parser quotes from the text as unrecognized is left out ({@code '…'}).
     */
    public static InvalidInputException invalidJson(String source, String what, IOException cause) {
        String where = "";
        String msg = cause.getMessage() == null ? "" : cause.getMessage();
        if (cause instanceof JsonProcessingException j) {
            JsonLocation l = j.getLocation();
            where = l == null || l.getLineNr() < 0 ? "" : " at line " + l.getLineNr() + ", column " + l.getColumnNr();
            msg = j.getOriginalMessage() == null ? "" : j.getOriginalMessage();
        }
        msg = JSON_SOURCE.matcher(msg.split("\n", 2)[0]).replaceAll("line $1, column $2");
        // Jackson's advice to enable a parser feature is for programmers, not for the file's author
        msg = msg.replaceAll(":? ?enable `?[A-Za-z.]*(Feature|ALLOW)[A-Za-z_.]*`?[^)]*", "").strip();
        if (msg.contains("'NaN'") || msg.contains("'Infinity'") || msg.contains("'-Infinity'")) {
            msg = msg + " (NaN and Infinity are not numbers in JSON)";
        }
        msg = QUOTED.matcher(msg).replaceAll("$1'…'");
        return wrap(source, what + " (invalid JSON" + where + (msg.isEmpty() ? "" : ": " + msg) + ")", cause);
    }

    /**
     * A token Jackson quotes from the text: left out, so that an error about a file that is not JSON (a path a
     * table names, say) does not print what the file holds.
     */
    private static final Pattern QUOTED = Pattern.compile("(Unrecognized token )'[^'\n]*'");

    /** A location inside a Jackson message, which names the source in its own words. */
    private static final Pattern JSON_SOURCE = Pattern.compile(
            "\\[Source: [^\\]]*?; line: (-?\\d+), column: (-?\\d+)]");

    /** The problem itself, without the location prefix of {@link #getMessage()}. */
    public String detail() {
        return detail;
    }

    /** The file or other source that holds the problem, if known. */
    public Optional<String> source() {
        return Optional.ofNullable(source);
    }

    /** The 1-based line in {@link #source()}, or 0 when not line-oriented. */
    public long line() {
        return line;
    }

    /** The graph node that holds the problem, if any. */
    public Optional<String> node() {
        return Optional.ofNullable(node);
    }
}
