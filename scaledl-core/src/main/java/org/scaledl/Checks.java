package org.scaledl;

/**
 * Argument and state checks with Guava's message templates ({@code %s} placeholders), written out so that the
 * library needs no Guava at run time: an application pinned to an old Guava (Hadoop 2, Spark 2) cannot then break
 * it with a {@code NoSuchMethodError}.
 *
 * <pre>{@code
 * Checks.argument(batch > 0, "batch must be positive: %s", batch);
 * }</pre>
 */
public final class Checks {
    private Checks() {
    }

    /**
     * Throws {@link IllegalArgumentException} with the formatted message unless {@code ok}.
     *
     * @param template a message with {@code %s} placeholders, filled with {@code args} in order
     */
    public static void argument(boolean ok, String template, Object... args) {
        if (!ok) {
            throw new IllegalArgumentException(format(template, args));
        }
    }

    /** Throws {@link IllegalStateException} with the formatted message unless {@code ok}. */
    public static void state(boolean ok, String template, Object... args) {
        if (!ok) {
            throw new IllegalStateException(format(template, args));
        }
    }

    /** {@code %s} placeholders filled with the arguments in order; extra arguments are appended in brackets. */
    static String format(String template, Object... args) {
        StringBuilder b = new StringBuilder(template.length() + 16 * args.length);
        int from = 0;
        int i = 0;
        while (i < args.length) {
            int at = template.indexOf("%s", from);
            if (at < 0) {
                break;
            }
            b.append(template, from, at).append(args[i++]);
            from = at + 2;
        }
        b.append(template.substring(from));
        if (i < args.length) {
            b.append(" [");
            for (int k = i; k < args.length; k++) {
                b.append(k > i ? ", " : "").append(args[k]);
            }
            b.append(']');
        }
        return b.toString();
    }
}
