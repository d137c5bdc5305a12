/**
 * D-optimal experimental design: Fedorov's exchange and a budgeted design on EJML. Knows nothing of DNNs.
 */
module org.scaledl.doe {
    requires ejml.core;
    requires ejml.ddense;
    requires org.slf4j;

    exports org.scaledl.doe;
}
