package org.scaledl.model.file;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Locale;
import org.scaledl.InvalidInputException;

/**
 * Reads the fields of a model body with their ranges checked: a model file's checksum is no signature
 * ({@link Envelope}), so every number is validated where it is read, and a file with a field out of range is refused
 * naming the field, never loaded to fail (or spin, or predict nonsense) later.
 *
 * <pre>{@code
 * double shrink = Fields.inRange(body.path("shrink"), "shrink", 0, 1);
 * int rounds = Fields.intInRange(body.path("rounds"), "rounds", 0, 16);
 * }</pre>
 */
public final class Fields {
    private Fields() {
    }

    /**
     * A finite number.
     *
     * @throws InvalidInputException naming {@code what} when it is missing or not a finite number
     */
    public static double finite(JsonNode n, String what) {
        if (n == null || !n.isNumber() || !Double.isFinite(n.asDouble())) {
            throw InvalidInputException.of(what + " is missing or not a finite number");
        }
        return n.asDouble();
    }

    /**
     * A finite number in {@code [lo, hi]}.
     *
     * @throws InvalidInputException naming {@code what}, its value and the range
     */
    public static double inRange(JsonNode n, String what, double lo, double hi) {
        double v = finite(n, what);
        if (v < lo || v > hi) {
            throw InvalidInputException.of(String.format(Locale.ROOT, "%s = %s is outside its range [%s, %s]", what,
                    n.asText(), lo, hi));
        }
        return v;
    }

    /**
     * An integer in {@code [lo, hi]}.
     *
     * @throws InvalidInputException naming {@code what}, its value and the range
     */
    public static int intInRange(JsonNode n, String what, int lo, int hi) {
        if (n == null || !n.isIntegralNumber() || !n.canConvertToInt()) {
            if (n != null && n.isNumber() && Double.isFinite(n.asDouble()) && n.asDouble() == Math.rint(n.asDouble())
                    && Math.abs(n.asDouble()) < Integer.MAX_VALUE) {
                return intInRange(com.fasterxml.jackson.databind.node.IntNode.valueOf((int) n.asDouble()), what, lo,
                        hi);
            }
            throw InvalidInputException.of(what + " is missing or not an integer"
                    + (n == null || n.isMissingNode() ? "" : ": " + n.asText()));
        }
        int v = n.asInt();
        if (v < lo || v > hi) {
            throw InvalidInputException.of(what + " = " + v + " is outside its range [" + lo + ", " + hi + "]");
        }
        return v;
    }
}
