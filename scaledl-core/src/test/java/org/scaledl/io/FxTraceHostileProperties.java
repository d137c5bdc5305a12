package org.scaledl.io;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.InvalidInputException;
import org.scaledl.TestData;

/** Mangled node traces fail with {@link InvalidInputException} naming the file, never anything else. */
class FxTraceHostileProperties {
    private static final Path GPT2 = TestData.gpu()
            .resolve("neusight/models/nodes/NVIDIA_L4/gpt2_large-inf-1024-4.csv");
    private static final String[] JUNK = {"", "-1", "99999999999999999999", "(1, -4)", "((", "x", "\"", "nan",
        "1e400", "(99999999999999999999, 2)", "(4, 1024, 0)",
        "placeholder", "output", "layer", "torch.float32", "torch.complex64", "a;b;c", "0"};

    @Property(tries = 300)
    void mangledTracesFailCleanly(@ForAll @IntRange(min = 0, max = 1_000_000) int seed) throws IOException {
        Random r = new Random(seed);
        List<String> lines = new ArrayList<>(Files.readAllLines(GPT2));
        int edits = 1 + r.nextInt(4);
        for (int e = 0; e < edits; e++) {
            int i = 1 + r.nextInt(lines.size() - 1);
            switch (r.nextInt(4)) {
                case 0 -> lines.remove(i);
                case 1 -> lines.set(i, lines.get(i).substring(0, r.nextInt(lines.get(i).length())));
                case 2 -> {
                    String[] f = lines.get(i).split(",", -1);
                    f[r.nextInt(f.length)] = JUNK[r.nextInt(JUNK.length)];
                    lines.set(i, String.join(",", f));
                }
                default -> lines.add(i, lines.get(r.nextInt(lines.size())));
            }
        }
        Path dir = Files.createTempDirectory("fx");
        Path f = dir.resolve("m-train-16-4.csv");
        try {
            Files.write(f, lines);
            FxTraceReader.read(f, 1 + r.nextInt(4));
        } catch (InvalidInputException e) {
            assertTrue(e.getMessage().contains("m-train-16-4.csv"), e.getMessage());
        } finally {
            Files.deleteIfExists(f);
            Files.deleteIfExists(dir);
        }
    }
}
