package org.scaledl.onnx;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.scaledl.graph.Attribute;
import org.scaledl.onnx.ShapeInference.Unknown;
import org.scaledl.onnx.ShapeInference.Val;

/** Contractions: {@code Gemm}, {@code MatMul}, {@code Einsum}, and the recurrent cells built of them. */
final class ContractionRules {
    private ContractionRules() {
    }

    static void register(ShapeInference.Table t) {
        t.one(ContractionRules::gemm, "Gemm");
        t.one(ContractionRules::matmul, "MatMul");
        t.one(ContractionRules::einsum, "Einsum");
        t.put(ContractionRules::recurrent, "LSTM", "GRU", "RNN");
    }

    private static Val gemm(OpContext c) throws Unknown {
        long[] a = c.shape(0);
        long[] b = c.shape(1);
        if (a.length != 2 || b.length != 2) {
            throw c.bad("A and B must be matrices, got " + Arrays.toString(a) + " and " + Arrays.toString(b));
        }
        boolean ta = c.node().longAttribute("transA", 0) != 0;
        boolean tb = c.node().longAttribute("transB", 0) != 0;
        long m = ta ? a[1] : a[0];
        long k = ta ? a[0] : a[1];
        long k2 = tb ? b[1] : b[0];
        long n = tb ? b[0] : b[1];
        if (k != k2) {
            throw c.bad("inner dimensions differ: " + k + " vs " + k2);
        }
        long[] out = {m, n};
        if (c.has(2)) {
            c.broadcast(out, c.shape(2));
        }
        return new Val(c.input(0).type(), out, null);
    }

    private static Val matmul(OpContext c) throws Unknown {
        long[] a = c.shape(0);
        long[] b = c.shape(1);
        if (a.length == 0 || b.length == 0) {
            throw c.bad("operands must not be scalars");
        }
        long[] a2 = a.length == 1 ? new long[] {1, a[0]} : a;
        long[] b2 = b.length == 1 ? new long[] {b[0], 1} : b;
        long k = a2[a2.length - 1];
        if (k != b2[b2.length - 2]) {
            throw c.bad("inner dimensions differ: " + Arrays.toString(a) + " x " + Arrays.toString(b));
        }
        long[] batch = c.broadcast(Arrays.copyOf(a2, a2.length - 2), Arrays.copyOf(b2, b2.length - 2));
        List<Long> out = new ArrayList<>();
        for (long d : batch) {
            out.add(d);
        }
        if (a.length > 1) {
            out.add(a2[a2.length - 2]);
        }
        if (b.length > 1) {
            out.add(b2[b2.length - 1]);
        }
        return new Val(c.input(0).type(), out.stream().mapToLong(Long::longValue).toArray(), null);
    }

    private static Val einsum(OpContext c) throws Unknown {
        String eq = c.node().attribute("equation").map(Attribute::asString).orElseThrow(() -> c.bad("no equation"))
                .replace(" ", "");
        int arrow = eq.indexOf("->");
        if (arrow < 0 || eq.contains("...")) {
            throw new Unknown("Einsum without explicit output or with ellipsis is not inferred");
        }
        String[] terms = eq.substring(0, arrow).split(",", -1);
        long[] sizes = new long[128];
        for (int t = 0; t < terms.length; t++) {
            long[] s = c.shape(t);
            if (s.length != terms[t].length()) {
                throw c.bad("term '" + terms[t] + "' does not match input rank " + s.length);
            }
            for (int i = 0; i < s.length; i++) {
                char ch = terms[t].charAt(i);
                if (ch >= 128) {
                    throw c.bad("unsupported subscript " + ch);
                }
                sizes[ch] = Math.max(sizes[ch], s[i]);
            }
        }
        String outTerm = eq.substring(arrow + 2);
        long[] out = new long[outTerm.length()];
        for (int i = 0; i < out.length; i++) {
            char ch = outTerm.charAt(i);
            if (ch >= 128 || sizes[ch] == 0) {
                throw c.bad("output subscript " + ch + " not in inputs");
            }
            out[i] = sizes[ch];
        }
        return new Val(c.input(0).type(), out, null);
    }

    /**
     * LSTM, GRU, RNN: {@code X [seq, batch, input]} ({@code layout} 0) or {@code [batch, seq, input]} (1); outputs
     * {@code Y [seq, dirs, batch, hidden]} (or {@code [batch, seq, dirs, hidden]}), {@code Y_h} and (LSTM)
     * {@code Y_c [dirs, batch, hidden]} (or {@code [batch, dirs, hidden]}).
     */
    private static List<Val> recurrent(OpContext c) throws Unknown {
        String op = c.node().opType();
        Val x = c.input(0);
        long[] xs = x.shape();
        long[] ws = c.shape(1);
        if (xs.length != 3 || ws.length != 3) {
            throw c.bad("input rank " + xs.length + " and weight rank " + ws.length + " must both be 3");
        }
        String direction = c.node().attribute("direction").map(Attribute::asString).orElse("forward");
        long dirs = switch (direction) {
            case "forward", "reverse" -> 1;
            case "bidirectional" -> 2;
            default -> throw c.bad("unknown direction '" + direction + "'");
        };
        long gates = op.equals("LSTM") ? 4 : op.equals("GRU") ? 3 : 1;
        long hidden = c.node().longAttribute("hidden_size", ws[1] / gates);
        if (ws[0] != dirs || ws[1] != gates * hidden) {
            throw c.bad("weight " + Arrays.toString(ws) + " does not fit " + dirs + " direction(s) of " + gates
                    + " gates x hidden " + hidden);
        }
        boolean batchFirst = c.node().longAttribute("layout", 0) == 1;
        long seq = batchFirst ? xs[1] : xs[0];
        long batch = batchFirst ? xs[0] : xs[1];
        long[] y = batchFirst ? new long[] {batch, seq, dirs, hidden} : new long[] {seq, dirs, batch, hidden};
        long[] state = batchFirst ? new long[] {batch, dirs, hidden} : new long[] {dirs, batch, hidden};
        c.checkDims(y);
        List<Val> out = new ArrayList<>();
        out.add(new Val(x.type(), y, null));
        for (int k = 1; k < c.node().outputs().size(); k++) {
            out.add(new Val(x.type(), state, null));
        }
        return out;
    }
}
