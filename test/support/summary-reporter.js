// Prints the closing line CI reads: "N passed, N failed". A suite that failed to load counts as failed.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed\n`);
  }
}
module.exports = SummaryReporter;
