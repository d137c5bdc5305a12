/**
 * scaledl's core: the layer graph and its importers, layer features, the layer cost stages and
 * {@link org.scaledl.model.RuntimePredictor}, the one front door. The packages exported are the API, including the
 * types its methods return ({@code model.cost}'s operator cost, {@code model.exec}'s execution model and named terms);
 * the host stage's internals ({@code model.host}) stay inside the module, and the model-file helpers are open only to
 * the modules that write files of their own.
 */
module org.scaledl.core {
    requires transitive org.scaledl.doe;
    requires transitive com.fasterxml.jackson.databind;
    requires ejml.core;
    requires ejml.ddense;
    requires com.google.protobuf;
    requires org.slf4j;

    exports org.scaledl;
    exports org.scaledl.graph;
    exports org.scaledl.onnx;
    exports org.scaledl.transformer;
    exports org.scaledl.workload;
    exports org.scaledl.features;
    exports org.scaledl.io;
    exports org.scaledl.model;
    exports org.scaledl.model.comm;
    exports org.scaledl.model.cost;
    exports org.scaledl.model.exec;
    exports org.scaledl.model.device;
    exports org.scaledl.model.plan;
    exports org.scaledl.eval;
    exports org.scaledl.model.file to org.scaledl.gnn;

    uses org.scaledl.model.InteractionCodec;
}
