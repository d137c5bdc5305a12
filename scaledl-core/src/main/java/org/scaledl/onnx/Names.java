package org.scaledl.onnx;

import java.util.HashMap;
import java.util.Map;

/**
 * Names from an ONNX file made safe to print: graph, node and tensor names, operator types, symbolic dimensions and
 * attribute strings keep their text, but characters that can forge or hide output (C0 controls, DEL, C1 controls,
 * the line and paragraph separators U+2028 and U+2029, and the bidirectional overrides and isolates U+202A–U+202E
 * and U+2066–U+2069) become visible escapes such as <code>&#92;u001b</code>. The importer applies this as it reads
 * the file, so the escaped name is the name: every reference to a tensor (node inputs and outputs, graph inputs and
 * outputs, initializers, {@code value_info}) is escaped the same way and lookups stay consistent.
 *
 * <pre>
 * Names.escape("conv" + (char) 27 + "[2J" + (char) 10 + "FAKE");   // conv&#92;u001b[2J&#92;u000aFAKE
 * </pre>
 *
 * <p>An instance also checks that escaping is one-to-one within a file: two different names that escape to the same
 * text (a raw {@code ESC} and the six characters <code>&#92;u001b</code>) would silently become one tensor, so they are
 * refused ({@link #identifier(String)}).
 */
final class Names {
    /** Escaped names that contain a backslash, to the raw name they came from: the only ones that can collide. */
    private final Map<String, String> escapedFrom = new HashMap<>();

    /**
     * The text with every {@linkplain org.scaledl.InvalidInputException#unsafe unsafe} character replaced by
     * {@code \}{@code uXXXX}.
     */
    static String escape(String s) {
        return org.scaledl.InvalidInputException.escaped(s);
    }

    /**
     * A node or tensor name, escaped.
     *
     * @throws OnnxWire.ContentProblem if another name of this file escapes to the same text
     */
    String identifier(String raw) throws OnnxWire.ContentProblem {
        String clean = escape(raw);
        if (clean.indexOf('\\') >= 0) {
            String before = escapedFrom.putIfAbsent(clean, raw);
            if (before != null && !before.equals(raw)) {
                throw new OnnxWire.ContentProblem("two different names read '" + clean + "' once their control "
                        + "characters are escaped (\\uXXXX); rename one of them", clean);
            }
        }
        return clean;
    }
}
