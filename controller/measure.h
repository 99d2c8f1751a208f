/*  measure — `treefarm measure`: deploy the tree as `treefarm run` does,
 *  calibrate it with the 3-point procedure (controller/calib.h,
 *  docs/measure.md) instead of running a bag, and write the measured
 *  platform as a config every command accepts, measure.json and a plot.
 */
#ifndef TF_MEASURE_H
#define TF_MEASURE_H

/*  Run `treefarm measure` with argv[0] = "measure" and the command's
 *  arguments. Returns the process exit code (controller/cli.h). */
int measure_main (int argc, char **argv);

#endif
