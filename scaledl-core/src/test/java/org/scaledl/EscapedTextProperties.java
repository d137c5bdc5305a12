package org.scaledl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link InvalidInputException#escaped}, what ONNX names and command-line errors pass through before a terminal:
 * nothing that can forge or hide output survives it, text without such characters is left as it is, escaping twice
 * changes nothing, and it agrees with a slow reference (each unsafe character as its six-character escape).
 */
class EscapedTextProperties {
    @Provide
    Arbitrary<String> hostile() {
        // printable ASCII, the backslash and u, accented and wide characters, and every kind of unsafe character
        Arbitrary<Character> c = Arbitraries.oneOf(Arbitraries.chars().range(' ', '~'), Arbitraries.of('\\', 'u',
                'é', '中', '∑', '\u0000', '\n', '\t', '\u001b', '\u007f', '\u0085', '\u009f', '\u2028', '\u2029',
                '\u202a', '\u202e', '\u2066', '\u2069'), Arbitraries.chars().range('\u0000', '\u00ff'));
        return c.list().ofMaxSize(40).map(l -> {
            StringBuilder b = new StringBuilder();
            l.forEach(b::append);
            return b.toString();
        });
    }

    @Property(tries = 500)
    void nothingUnsafeSurvivesAndEachEscapeReadsBack(@ForAll("hostile") String text) {
        String shown = InvalidInputException.escaped(text);
        assertTrue(shown.chars().noneMatch(ch -> InvalidInputException.unsafe((char) ch)), shown);
        assertEquals(shown, InvalidInputException.escaped(shown), "escaping what is shown changes nothing");
        if (text.chars().noneMatch(ch -> InvalidInputException.unsafe((char) ch))) {
            assertEquals(text, shown);
        }
        // the slow reference: every unsafe character as its six-character escape, everything else as it is
        StringBuilder reference = new StringBuilder();
        for (char ch : text.toCharArray()) {
            reference.append(InvalidInputException.unsafe(ch) ? String.format("\\u%04x", (int) ch)
                    : String.valueOf(ch));
        }
        assertEquals(reference.toString(), shown);
    }
}
