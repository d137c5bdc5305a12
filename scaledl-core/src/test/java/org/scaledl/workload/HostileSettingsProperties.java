package org.scaledl.workload;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.function.Function;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.scaledl.InvalidInputException;

/**
 * Every parser of a job's settings (what a candidate cell, a log value or an option gives) either reads a text or
 * refuses it with an {@link InvalidInputException} whose message shows no control character (no terminal escape
 * reaches the screen) and stays short whatever the text's length; nothing else is thrown.
 */
class HostileSettingsProperties {
    private static final List<Function<String, ?>> PARSERS = List.of(Precision::parse, Recompute::parse,
            RecomputeModule::parseList, MoeDispatcher::parse, CudaGraphs::parse, MemoryFormat::parse, Phase::parse,
            Workload::parseGradDtype, GradReduce::parse);

    @Provide
    Arbitrary<String> hostile() {
        Arbitrary<String> controls = Arbitraries.strings().withCharRange('\u0000', '\u001f').withChars('\u007f',
                '\u009b', '\u2028').ofMinLength(1).ofMaxLength(20);
        Arbitrary<String> names = Arbitraries.of("bf16", "moe_act", "deepep", "selective", "train", "nchw", "fp32",
                "overlapped", "layers");
        Arbitrary<String> junk = Arbitraries.strings().all().ofMaxLength(5000);
        return Arbitraries.oneOf(junk, Arbitraries.strings().all().ofMaxLength(30),
                net.jqwik.api.Combinators.combine(names, controls, names).as((a, c, b) -> a + c + b),
                net.jqwik.api.Combinators.combine(controls, names).as((c, a) -> "\u001b[2J" + c + a + "+" + a));
    }

    @Property(tries = 300)
    void refusalsAreShortAndShowNoControlCharacter(@ForAll("hostile") String text) {
        for (Function<String, ?> parse : PARSERS) {
            try {
                parse.apply(text);
            } catch (InvalidInputException e) {
                String m = e.getMessage();
                assertTrue(m.length() <= 400, m.length() + " characters");
                assertTrue(m.chars().noneMatch(ch -> ch < 0x20 || ch == 0x7f || ch >= 0x80 && ch <= 0x9f
                        || ch == 0x2028), m);
            }
        }
    }
}
