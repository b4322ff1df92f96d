// Prints the closing line CI reads: "N passed, N failed". A suite that failed to load counts as failed.
// Printed when the process exits, so it comes after Jest's own summary and is the last line.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    process.once('exit', () => process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed\n`));
  }
}
module.exports = SummaryReporter;
