package org.scaledl.onnx;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.scaledl.InvalidInputException;

/**
 * The work of an import grows linearly with the file's size, whatever the ranks and dims of its tensors: a file
 * of 8 copies of a random block of nodes costs at most about 8 times a file of one copy. Work is counted two ways,
 * neither of them a clock: the importer's own count of elementary steps ({@link ImportWork}: bytes parsed, dims
 * visited per node and batch size, value elements propagated), and the bytes the importing thread allocates, which
 * the quadratic checks the security review found (a string of all dims rebuilt at every dim, a suffix search per
 * repeated node name, a list scan per repeated input) made grow with the square of the size.
 */
class HostileInputWorkProperties {
    /** A size ratio of 8 may cost at most this much more work (linear: about 8; quadratic: about 64). */
    private static final double MAX_RATIO = 16;

    /**
     * One block of nodes on a tensor of the given shape, returning the block's output (of the same shape): element-wise
     * operators, a transpose, a Shape → Gather → Concat → Reshape chain and its inverse, a wide Concat and Sum of one
     * tensor repeated, a Constant of random rank with Unsqueeze/Squeeze, and node names that repeat.
     */
    private static String block(OnnxBuilder b, Random r, int k, String in, long[] shape) {
        int rank = shape.length;
        String p = "b" + k + "_";
        boolean dup = r.nextBoolean();
        String[] name = {dup ? "same" : p + "relu", dup ? "same" : p + "add", dup ? "same" : p + "tr"};
        b.node(name[0], "Relu", List.of(in), List.of(p + "a"));
        b.node(name[1], "Add", List.of(p + "a", p + "a"), List.of(p + "b"));
        long[] perm = new long[rank];
        List<Long> rest = new ArrayList<>();
        for (int d = 1; d < rank; d++) {
            rest.add((long) d);
        }
        Collections.shuffle(rest, r);
        for (int d = 1; d < rank; d++) {
            perm[d] = rest.get(d - 1);
        }
        b.node(name[2], "Transpose", List.of(p + "b"), List.of(p + "c"), OnnxBuilder.ints("perm", perm));
        long[] inverse = new long[rank];
        for (int d = 0; d < rank; d++) {
            inverse[(int) perm[d]] = d;
        }
        b.node(p + "untr", "Transpose", List.of(p + "c"), List.of(p + "d"), OnnxBuilder.ints("perm", inverse));
        // flatten to [batch, -1] through computed shapes, and back
        b.node(p + "shape", "Shape", List.of(p + "d"), List.of(p + "s"));
        b.node(p + "i0", "Constant", List.of(), List.of(p + "zero"),
                OnnxBuilder.int64Tensor("value", new long[] {1}, 0));
        b.node(p + "gather", "Gather", List.of(p + "s", p + "zero"), List.of(p + "n"), OnnxBuilder.intAttr("axis", 0));
        b.node(p + "m1", "Constant", List.of(), List.of(p + "minus"),
                OnnxBuilder.int64Tensor("value", new long[] {1}, -1));
        b.node(p + "cat", "Concat", List.of(p + "n", p + "minus"), List.of(p + "t"), OnnxBuilder.intAttr("axis", 0));
        b.node(p + "flat", "Reshape", List.of(p + "d", p + "t"), List.of(p + "f"));
        b.node(p + "unflat", "Reshape", List.of(p + "f", p + "s"), List.of(p + "e"));
        // side branches: one tensor read many times
        int wide = 1 + r.nextInt(40);
        b.node(p + "wide", "Concat", Collections.nCopies(wide, p + "f"), List.of(p + "w"),
                OnnxBuilder.intAttr("axis", 1));
        b.node(p + "sum", "Sum", Collections.nCopies(wide, p + "zero"), List.of(p + "z"));
        long[] ones = new long[1 + r.nextInt(63)];
        java.util.Arrays.fill(ones, 1);
        b.node(p + "k", "Constant", List.of(), List.of(p + "kv"), OnnxBuilder.int64Tensor("value", ones, 7));
        b.node(p + "unsq", "Unsqueeze", List.of(p + "kv"), List.of(p + "ku"), OnnxBuilder.ints("axes", 0));
        b.node(p + "sq", "Squeeze", List.of(p + "ku"), List.of(p + "ks"), OnnxBuilder.ints("axes", 0));
        return p + "e";
    }

    /** A model of {@code copies} blocks on an input of random rank (1 to 63) and dims. */
    private static byte[] model(long seed, int copies) {
        Random shapeRandom = new Random(seed);
        int rank = 2 + shapeRandom.nextInt(62);
        long[] shape = new long[rank];
        shape[0] = -1;
        for (int d = 1; d < rank; d++) {
            shape[d] = 1;
        }
        for (int i = 0; i < 4; i++) {
            shape[1 + shapeRandom.nextInt(rank - 1)] = 1 + shapeRandom.nextInt(16);
        }
        OnnxBuilder b = new OnnxBuilder().input("x", shape);
        String cur = "x";
        for (int k = 0; k < copies; k++) {
            // the same block each time: the file grows by copies, not by new kinds of work
            cur = block(b, new Random(seed), k, cur, shape);
        }
        return b.output(cur).build();
    }

    private static long allocated() {
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
                && t.isThreadAllocatedMemorySupported() && t.isThreadAllocatedMemoryEnabled()) {
            return t.getCurrentThreadAllocatedBytes();
        }
        return -1;
    }

    private record Cost(int bytes, long steps, long allocated) {
    }

    private static Cost cost(byte[] model) {
        OnnxImporter.readCounted(model, "w", "w.onnx", OnnxImporter.Options.defaults()); // warm up
        long before = allocated();
        OnnxImporter.Counted c = OnnxImporter.readCounted(model, "w", "w.onnx", OnnxImporter.Options.defaults());
        long after = allocated();
        assertTrue(c.graph().coverage().isComplete(), c.graph().coverage().summary());
        return new Cost(model.length, c.steps(), before < 0 ? -1 : after - before);
    }

    @Property(tries = 25)
    void importWorkIsLinearInTheFileSize(@ForAll long seed) {
        Cost one = cost(model(seed, 2));
        Cost eight = cost(model(seed, 16));
        double size = (double) eight.bytes() / one.bytes();
        assertTrue(size > 6, "sizes " + one.bytes() + " and " + eight.bytes());
        assertTrue(eight.steps() <= MAX_RATIO / 8 * size * one.steps(), "steps " + one.steps() + " -> "
                + eight.steps() + " for bytes " + one.bytes() + " -> " + eight.bytes());
        assertTrue(eight.steps() <= 3 * ImportWork.BASE_VALUE_BUDGET + 1000L * eight.bytes(),
                eight.steps() + " steps for " + eight.bytes() + " bytes");
        if (one.allocated() > 0) {
            assertTrue(eight.allocated() <= MAX_RATIO / 8 * size * one.allocated(), "allocated "
                    + one.allocated() + " -> " + eight.allocated() + " for bytes " + one.bytes() + " -> "
                    + eight.bytes());
        }
    }

    /** A file made of one node reading one tensor many times, or of many nodes of one name, costs linear work. */
    @Property(tries = 10)
    void repeatedNamesAndInputsCostLinearWork(@ForAll @IntRange(min = 500, max = 2000) int n) {
        Cost[] costs = new Cost[2];
        for (int s = 0; s < 2; s++) {
            int m = n * (s == 0 ? 1 : 8);
            OnnxBuilder b = new OnnxBuilder().input("x", -1, 2).output("y");
            b.node("wide", "Concat", Collections.nCopies(m, "x"), List.of("w"), OnnxBuilder.intAttr("axis", 1));
            String prev = "x";
            for (int i = 0; i < m / 8; i++) {
                b.node("same", "Relu", List.of(prev), List.of("r" + i));
                prev = "r" + i;
            }
            b.node("last", "Identity", List.of(prev), List.of("y"));
            costs[s] = cost(b.build());
        }
        double size = (double) costs[1].bytes() / costs[0].bytes();
        assertTrue(costs[1].steps() <= MAX_RATIO / 8 * size * costs[0].steps(), costs[0] + " -> " + costs[1]);
        if (costs[0].allocated() > 0) {
            assertTrue(costs[1].allocated() <= MAX_RATIO / 8 * size * costs[0].allocated(),
                    costs[0] + " -> " + costs[1]);
        }
    }

    /** Refused files are refused after linear work too: any rank, up to 200,000 dimensions. */
    @Property(tries = 10)
    void hugeRanksAreRefusedAfterLinearAllocation(@ForAll @IntRange(min = 65, max = 200_000) int rank) {
        long[] dims = new long[rank];
        java.util.Arrays.fill(dims, 2);
        byte[] model = new OnnxBuilder().input("x", dims).output("x").build();
        long before = allocated();
        try {
            OnnxImporter.read(model, "w", "w.onnx");
            throw new AssertionError("a rank of " + rank + " was accepted");
        } catch (InvalidInputException expected) {
            assertTrue(expected.getMessage().contains("more than the 64"), expected.getMessage());
        }
        if (before >= 0) {
            long used = allocated() - before;
            assertTrue(used <= 64L * model.length + (4 << 20), used + " bytes allocated for " + model.length);
        }
    }
}
