package org.scaledl.workload;


/**
 * Operator families: layers of one family share a runtime regressor. The grouping follows how the work is executed
 * (dense contractions, memory-bound element-wise kernels, copies, free views), not the ONNX spelling.
 */
public enum OpFamily {
    /** Convolutions (dense or grouped) and transposed convolutions. */
    CONV,
    /** Depthwise convolutions (one group per input channel): memory-bound, unlike dense ones. */
    DEPTHWISE_CONV,
    /** Dense contractions: Gemm, MatMul, Einsum, and recurrent cells (LSTM, GRU, RNN: a contraction per step). */
    DENSE,
    /** Fused normalizations: BatchNormalization, LayerNormalization, InstanceNormalization, LRN. */
    NORM,
    /** Reductions: ReduceMean, ReduceSum, ArgMax, ... (decomposed layer norms are built from these). */
    REDUCE,
    /** Element-wise arithmetic and activations (memory-bound). */
    ELEMENTWISE,
    /** Window and global pooling. */
    POOL,
    /** Softmax and LogSoftmax (attention pieces). */
    SOFTMAX,
    /** Table look-ups: Gather whose data is a weight. */
    EMBEDDING,
    /**
     * Operators that copy data: Transpose, Concat, Pad, Split, Tile, Resize, DepthToSpace, SpaceToDepth, Gather on
     * activations.
     */
    MOVEMENT,
    /** Operators that are views in eager frameworks: Reshape, Flatten, (Un)Squeeze, Slice, Expand, Identity. */
    VIEW,
    /** Shape arithmetic and constants: no tensor data flows through them. */
    SHAPE,
    /** Operators not supported by the importer. */
    OTHER;

    /** The family of a layer from its operator type (without data-flow context; see {@link org.scaledl.features.FeatureExtractor}). */
    public static OpFamily ofOperator(String op) {
        return switch (op) {
            case "Conv", "ConvTranspose" -> CONV;
            case "Gemm", "MatMul", "Einsum", "LSTM", "GRU", "RNN" -> DENSE;
            case "BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
                    "LRN" -> NORM;
            case "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                    "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax", "ArgMin", "CumSum" -> REDUCE;
            case "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool" -> POOL;
            case "Softmax", "LogSoftmax" -> SOFTMAX;
            case "Gather" -> MOVEMENT;
            case "Transpose", "Concat", "Pad", "Split", "Tile", "Resize", "Upsample", "GatherElements", "ScatterND",
                    "ScatterElements", "Trilu", "DepthToSpace", "SpaceToDepth" -> MOVEMENT;
            case "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Slice", "Expand", "Identity" -> VIEW;
            case "Constant", "Shape", "Size", "ConstantOfShape", "Range" -> SHAPE;
            case "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "PRelu", "Relu", "Sigmoid",
                    "Erf", "Sqrt", "HardSigmoid", "HardSwish", "Tanh", "Gelu", "Clip", "Neg", "Exp", "Log", "Abs",
                    "Reciprocal", "LeakyRelu", "Elu", "Selu", "Softplus", "Softsign", "Mish", "Floor", "Ceil",
                    "Round", "Sign", "Sin", "Cos", "Not", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                    "And", "Or", "Xor", "Where", "Cast", "CastLike", "Dropout", "IsNaN", "IsInf", "Celu",
                    "ThresholdedRelu", "Shrink" -> ELEMENTWISE;
            default -> OTHER;
        };
    }
}
