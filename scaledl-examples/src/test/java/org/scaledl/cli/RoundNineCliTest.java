package org.scaledl.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Round nine of hostile input: {@code layouts} and {@code predict} with today's options, as a probe found them
 * silently accepting nonsense or saying less than they did, each case now refused or said.
 */
class RoundNineCliTest {
    private static final Path LLAMA = HostileCliTest.repo()
            .resolve("scaledl-core/src/test/resources/transformers/llama-3-8b/config.json");

    /** An option given an empty value (an unset shell variable) is refused naming it, not read as its default. */
    @Test
    void anEmptyOptionIsRefusedNotItsDefault() {
        for (String option : new String[] {"--cuda-graphs", "--moe-dispatcher", "--recompute", "--grad-reduce"}) {
            MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                    "4096", "--batch", "1", "--gpus", "8", "--device", "H100", option, "");
            assertEquals(2, r.code(), option + ": " + r.err());
            assertTrue(r.err().contains(option) && r.err().contains("an empty value"), r.err());
        }
    }

    /**
     * Context parallelism that leaves each rank a few tokens of the sequence is said (its exchanges outweigh the
     * work); a long-context split is not.
     */
    @Test
    void aContextSplitIntoAFewTokensARankIsSaid() throws Exception {
        MainTest.Run thin = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                "4096", "--batch", "1", "--gpus", "64", "--context", "16", "--device", "H100", "--precision", "bf16");
        assertEquals(0, thin.code(), thin.err());
        assertTrue(thin.err().contains("context parallelism 16 leaves each rank 256 tokens of the 4096-token "
                + "sequence"), thin.err());
        MainTest.Run fine = MainTest.run("predict", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq",
                "8192", "--batch", "1", "--gpus", "16", "--context", "2", "--device", "H100", "--precision", "bf16");
        assertEquals(0, fine.code(), fine.err());
        assertFalse(fine.err().contains("leaves each rank"), fine.err());
    }

    /**
     * {@code layouts}: a degree listed twice is one degree, echoed once; a topology given in part is said to be
     * partly assumed, in the header and in the JSON.
     */
    @Test
    void layoutsListsADegreeOnceAndSaysAPartlyAssumedTopology() throws Exception {
        String[] job = {"layouts", "--model", "gpu", "--transformer", LLAMA.toString(), "--seq", "4096", "--gpus", "16",
            "--global-batch", "64", "--device", "H100", "--precision", "bf16", "--top", "2"};
        MainTest.Run twice = MainTest.run(HostileCliTest.concat(job, "--tensor", "2,2", "--gpus-per-node", "4"));
        assertEquals(0, twice.code(), twice.err());
        assertTrue(twice.out().contains("those of tensor [2]"), twice.out());
        assertTrue(twice.out().contains("(partly given, the rest the standard system's"), twice.out());
        MainTest.Run json = MainTest.run(HostileCliTest.concat(job, "--gpus-per-node", "4", "--json"));
        assertEquals(0, json.code(), json.err());
        JsonNode j = new ObjectMapper().readTree(json.out());
        assertTrue(j.get("topology_assumed").asBoolean(), "the network was assumed");
        MainTest.Run whole = MainTest.run(HostileCliTest.concat(job, "--gpus-per-node", "4", "--inter-node-gbps", "1600", "--json"));
        assertEquals(0, whole.code(), whole.err());
        assertFalse(new ObjectMapper().readTree(whole.out()).get("topology_assumed").asBoolean());
    }

    /**
     * A candidate table's first bad row in its order is the one named, whether its cells are wrong (read) or the job
     * (refused by the model): a cell error below a refused job was named first.
     */
    @Test
    void aTablesFirstBadRowIsNamedWhateverIsWrongWithIt(@TempDir Path dir) throws Exception {
        Path cfg = dir.resolve("mixtral/config.json");
        Files.createDirectories(cfg.getParent());
        Files.writeString(cfg, ClusterPredictCliTest.SMALL_MOE);
        Path table = dir.resolve("jobs.csv");
        String good = "mixtral/config.json,4096,1,8,16,8,H100,bf16,1\n";
        Files.writeString(table, "transformer,seq,batch,micro_batches,world_size,expert,device,precision,"
                + "expert_imbalance\n" + good
                + "mixtral/config.json,4096,1,8,16,16,H100,bf16,1\n"   // line 3: 16 expert ranks for 8 experts
                + good + good
                + "mixtral/config.json,4096,1,8,16,8,H100,bf16,0.5\n");   // line 6: an imbalance below 1
        MainTest.Run r = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString(), "--out",
                dir.resolve("out.csv").toString());
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().contains("jobs.csv:3:") && !r.err().contains("jobs.csv:6:"), r.err());
        MainTest.Run each = MainTest.run("predict", "--model", "gpu", "--candidates", table.toString(), "--out",
                dir.resolve("each.csv").toString(), "--keep-going");
        assertEquals(0, each.code(), each.err());
        String out = Files.readString(dir.resolve("each.csv"));
        assertTrue(out.contains("jobs.csv:3:") && out.contains("jobs.csv:6:"), out);
    }

}
