package org.scaledl.workload;

import java.util.Locale;
import org.scaledl.InvalidInputException;

/**
 * The arithmetic a workload runs in, as frameworks run it:
 *
 * <ul>
 *   <li>{@link #FP32}: single precision everywhere; on NVIDIA Ampere and later, matrix work on the FP32 units
 *       (TF32 off).</li>
 *   <li>{@link #TF32}: tensors in FP32, matrix work on the tensor cores in TF32 (PyTorch's {@code allow_tf32}).</li>
 *   <li>{@link #FP16}, {@link #BF16}: <em>mixed</em> precision (PyTorch {@code autocast}, Megatron {@code --fp16} /
 *       {@code --bf16}): matrix work and activations in half precision, master weights, gradients' reduction where
 *       the framework keeps it and the optimizer in FP32.</li>
 * </ul>
 *
 * A graph exported in FP32 is predicted at any precision: the device model takes the precision's peak for matrix work
 * and its element size for the bytes activations move.
 *
 * <pre>{@code
 * Workload w = Workload.builder(g).precision(Precision.parse("bf16")).build();
 * }</pre>
 */
public enum Precision {
    /** FP32 everywhere. */
    FP32(4),
    /** FP32 tensors, TF32 tensor-core matrix work. */
    TF32(4),
    /** Mixed precision with FP16 matrix work and activations. */
    FP16(2),
    /** Mixed precision with BF16 matrix work and activations. */
    BF16(2);

    private final int activationBytes;

    Precision(int activationBytes) {
        this.activationBytes = activationBytes;
    }

    /** Bytes of one activation element (2 in mixed precision, else 4). */
    public int activationBytes() {
        return activationBytes;
    }

    /** True for the mixed-precision modes (half-precision activations, FP32 master weights). */
    public boolean isMixed() {
        return activationBytes == 2;
    }

    /** Lower-case name as used in CSV files and on the command line. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses {@code fp32}, {@code tf32}, {@code fp16} (also {@code amp}, {@code half}, {@code mixed}) or
     * {@code bf16} (any case; {@code float32}, {@code float16}, {@code bfloat16} too).
     *
     * @throws InvalidInputException naming the text and the accepted values
     */
    public static Precision parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "fp32", "float32", "float", "single" -> FP32;
            case "tf32" -> TF32;
            case "fp16", "float16", "half", "amp", "mixed" -> FP16;
            case "bf16", "bfloat16" -> BF16;
            default -> throw InvalidInputException.of("unknown precision '" + text
                    + "' (expected fp32, tf32, fp16 or bf16)");
        };
    }
}
