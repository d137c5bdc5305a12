package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round twenty-two: a hostile walk's findings at the keyboard (inputs taken silently, or refused unhelpfully). Each
 * case fails on the code before.
 */
class RoundTwentyTwoCliTest {
    private static final Path TRANSFORMERS = HostileCliTest.repo().resolve("scaledl-core/src/test/resources/transformers");
    private static final String LLAMA = TRANSFORMERS.resolve("llama-3-8b/config.json").toString();

    @TempDir
    Path dir;

    /** A candidate table written as {@code name} in the test's folder, scored with the bundled GPU model. */
    private MainTest.Run scored(String name, String table) throws Exception {
        Path t = dir.resolve(name);
        Files.writeString(t, table);
        return MainTest.run("predict", "--model", "gpu", "--candidates", t.toString(), "--out",
                dir.resolve(name + ".out.csv").toString(), "-q");
    }

    /** Llama 3 8B's configuration copied beside a table, named relative to it as tables name their files. */
    private String beside() throws Exception {
        Files.createDirectories(dir.resolve("llama"));
        Files.copy(Path.of(LLAMA), dir.resolve("llama/config.json"));
        return "llama/config.json";
    }

    private static String[] job(String... more) {
        return HostileCliTest.concat(new String[] {"predict", "--model", "gpu", "--transformer", LLAMA, "--seq", "4096",
            "--batch", "1", "--device", "H100", "--precision", "bf16", "-q"}, more);
    }

    /**
     * {@code scaling --measured} points are the sweep's own job: a column that describes another (tensor 8 under a
     * tensor-2 sweep) is refused, naming it; it was read as the sweep's job and calibrated its curve.
     */
    @Test
    void measuredPointsOfAnotherJobAreRefused() throws Exception {
        Path m = dir.resolve("m.csv");
        java.util.function.Function<String, MainTest.Run> sweep = table -> {
            try {
                Files.writeString(m, table);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return MainTest.run("scaling", "--model", "gpu", "--transformer", LLAMA, "--seq", "4096", "--batch", "1",
                    "--device", "H100", "--precision", "bf16", "--tensor", "2", "--gpus", "8,16", "--measured",
                    m.toString(), "--out", dir.resolve("s.svg").toString(), "-q");
        };
        MainTest.Run r = sweep.apply("gpus,batch,measured_ms,tensor\n8,1,260,2\n16,1,255,8\n");
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("m.csv:3: tensor 8 is not the sweep's job's (tensor 2)"), r.err());
        // Megatron's name for it, any case
        MainTest.Run alias = sweep.apply("gpus,batch,measured_ms,TP\n8,1,260,8\n");
        assertTrue(alias.code() == 1 && alias.err().contains("TP 8 is not the sweep's job's (tensor 2)"), alias.err());
        // the sweep's own values, written as a runs table writes them, and labels are taken
        MainTest.Run same = sweep.apply("gpus,batch,measured_ms,tensor,seq,precision,device,id\n"
                + "8,1,260,2,4096,bfloat16,NVIDIA H100 80GB HBM3,a\n16,1,255,02,4096,bf16,H100,b\n");
        assertEquals(0, same.code(), same.err());
    }

    /** {@code --threads} is a CPU worker's: with a GPU model it is refused (it only widened the interval). */
    @Test
    void threadsWithAGpuModelAreRefused() throws Exception {
        MainTest.Run r = MainTest.run(job("--threads", "1000"));
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--threads 1000: threads per worker are a CPU host model's"), r.err());
        assertEquals(0, MainTest.run(job("--threads", "1")).code());
        MainTest.Run table = scored("t.csv", "transformer,seq,batch,gpus,device,precision,threads\n" + beside()
                + ",4096,1,8,H100,bf16,1000\n");
        assertEquals(1, table.code(), table.err());
        assertTrue(table.err().contains("t.csv:2: threads 1000: threads per worker are a CPU host model's"),
                table.err());
    }

    /** A column of another framework's name beside the column it names must say the same (tp 8 beside tensor 1). */
    @Test
    void anAliasColumnThatContradictsItsColumnIsRefusedAtItsLine() throws Exception {
        String cfg = beside();
        MainTest.Run r = scored("c.csv", "transformer,seq,batch,gpus,device,precision,tensor,tp\n" + cfg
                + ",4096,1,8,H100,bf16,2,2\n" + cfg + ",4096,1,8,H100,bf16,1,8\n");
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("c.csv:3: column 'tp' (another name for tensor) says '8' where tensor says '1'"),
                r.err());
        // the same value written another way, a degree's default beside a blank, another tool's None, and a GPU's
        // index or a dtype beside the recipe (not the job's value) are no contradiction (the reviewers' cases)
        MainTest.Run ok = scored("same.csv", "transformer,seq,batch,gpus,device,gpu,precision,dtype,tensor,tp,"
                + "context,cp,virtual_stages,vpp\n" + cfg + ",4096,1,8,H100,0,bf16,bfloat16,02,2,,1,,None\n");
        assertEquals(0, ok.code(), ok.err());
    }

    /**
     * Numbers are ASCII digits, on the command line and in tables: a fullwidth {@code ８} (Java's parsers take it, and
     * the output tables echoed it) is refused, naming the value.
     */
    @Test
    void numbersInOtherScriptsDigitsAreRefused() throws Exception {
        MainTest.Run r = MainTest.run(job("--gpus", "\uFF18"));
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("is not a whole number in ASCII digits"), r.err());
        MainTest.Run table = scored("c.csv", "transformer,seq,batch,gpus,device,precision\n" + beside()
                + ",\uFF14\uFF10\uFF19\uFF16,1,8,H100,bf16\n");
        assertEquals(1, table.code(), table.err());
        assertTrue(table.err().contains("c.csv:2: seq must be a positive integer"), table.err());
        assertEquals(0, MainTest.run(job("--gpus", "8")).code());
    }

    /** {@code layouts --pipeline 0} is refused as no degree (it said no layout had that depth). */
    @Test
    void aLayoutsDegreeBelowOneIsRefused() {
        MainTest.Run r = MainTest.run("layouts", "--model", "gpu", "--transformer", LLAMA, "--seq", "4096", "--gpus",
                "8", "--global-batch", "64", "--device", "H100", "--precision", "bf16", "--pipeline", "0", "-q");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--pipeline 0: a degree is a positive whole number"), r.err());
    }
}
