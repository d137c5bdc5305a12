package org.scaledl.workload;

import java.util.Locale;
import java.util.Objects;
import org.scaledl.InvalidInputException;

/**
 * When a training job's data-parallel collectives run against its compute: the gradients' reduction after the
 * backward pass and, with a distributed optimizer (ZeRO 1–2), the updated weights' gather after the optimizer step.
 * Megatron core's {@code overlap_grad_reduce} and {@code overlap_param_gather} choose it; the second needs the first,
 * so three schedules exist.
 */
public enum GradReduce {
    /**
     * Both overlapped (the default): the reduction with the last micro-batch's backward pass, the gather with the first
     * one's forward pass, as Megatron core's {@code overlap_grad_reduce} and {@code overlap_param_gather} (NeMo's and
     * Megatron-Bridge's recipes), PyTorch DDP with its buckets and FSDP run them.
     */
    OVERLAPPED("overlapped"),
    /**
     * The reduction overlapped, the distributed optimizer's gather of the updated weights after the optimizer step,
     * exposed whole: Megatron core with {@code overlap_grad_reduce} and without {@code overlap_param_gather}
     * (Megatron-LM's default for the second; the MX-FP8 recipes of Megatron-Bridge that turn it off). Only with ZeRO
     * 1 or 2.
     */
    GATHER_AFTER_STEP("gather-after-step"),
    /**
     * Both after the backward pass, exposed whole: Megatron-LM's local DDP (before 2023, and still its default
     * without {@code --overlap-grad-reduce}), Megatron-DeepSpeed, DeepSpeed's ZeRO 1–2 without {@code overlap_comm},
     * PyTorch DDP with its buckets off; with ZeRO 2 and 3 each micro-batch's reduce-scatter is exposed.
     */
    AFTER_BACKWARD("after-backward");

    private final String label;

    GradReduce(String label) {
        this.label = label;
    }

    /** The name as used in CSV files and on the command line. */
    public String label() {
        return label;
    }

    /**
     * Parses {@code overlapped}, {@code gather-after-step} or {@code after-backward} (any case; underscores for
     * hyphens).
     *
     * @throws InvalidInputException naming the text and the accepted values
     */
    public static GradReduce parse(String text) {
        Objects.requireNonNull(text, "text");
        String t = text.trim().toLowerCase(Locale.ROOT).replace('_', '-');
        for (GradReduce g : values()) {
            if (g.label.equals(t)) {
                return g;
            }
        }
        throw InvalidInputException.of("unknown gradient reduction '" + InvalidInputException.printable(text, 80)
                + "' (expected overlapped, gather-after-step or after-backward)");
    }
}
