package org.scaledl;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/**
 * Close matches for names a user typed (a device, a machine, a method): what an error message offers as "did you
 * mean".
 *
 * <pre>{@code
 * Suggestions.closest("H100", catalogNames);   // Optional["NVIDIA H100 80GB HBM3"]
 * }</pre>
 */
public final class Suggestions {
    private Suggestions() {
    }

    /**
     * The known name closest to {@code typed}: one that contains it (ignoring case and everything but letters and
     * digits; three or more of them typed), else the one at the smallest edit distance if that is at most a third of its length; empty when
     * nothing is close.
     */
    public static Optional<String> closest(String typed, Collection<String> known) {
        String t = key(typed);
        if (t.isEmpty()) {
            return Optional.empty();
        }
        String contains = null;
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String k : known) {
            String kk = key(k);
            // a name that contains what was typed, when that is more than a letter or two (every name holds an "a")
            if (t.length() >= 3 && kk.contains(t) && (contains == null || k.length() < contains.length())) {
                contains = k;
            }
            int d = distance(t, kk);
            if (d < bestDistance) {
                bestDistance = d;
                best = k;
            }
        }
        if (contains != null) {
            return Optional.of(contains);
        }
        return best != null && bestDistance <= Math.max(1, key(best).length() / 3) ? Optional.of(best)
                : Optional.empty();
    }

    /**
     * The known name {@code typed} looks like a misspelling of, by a stricter test than {@link #closest} (for names
     * that are legitimately other names, such as a table's extra columns): the same letters and digits ignoring case,
     * else the nearest within two edits where both have five or more (the first of equals); empty otherwise, and for
     * a name that is known.
     */
    public static Optional<String> misspelt(String typed, Collection<String> known) {
        if (known.contains(typed)) {
            return Optional.empty();
        }
        String t = key(typed);
        String best = null;
        int bestDistance = 3;
        for (String k : known) {
            String kk = key(k);
            if (t.equals(kk)) {
                return Optional.of(k);
            }
            int d = Math.min(t.length(), kk.length()) >= 5 ? distance(t, kk) : Integer.MAX_VALUE;
            if (d < bestDistance) {
                best = k;
                bestDistance = d;
            }
        }
        return Optional.ofNullable(best);
    }

    private static String key(String s) {
        return s.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
    }

    /** Levenshtein distance. */
    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
