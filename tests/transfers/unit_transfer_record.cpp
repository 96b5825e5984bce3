// The transfer engine's stored measurement (services/transfer.hpp): its text form is read back
// exactly, and anything else - whatever a corrupt or hostile entry might hold once its checksum
// passes - is refused, never half-read and never a crash (gpurt/transfer.hpp: "an entry that was
// ... malformed (logged, then ignored)").
#include <limits>
#include <string>

#include "harness.hpp"
#include "services/transfer.hpp"

using gpurt::detail::format_measurement;
using gpurt::detail::parse_measurement;

TEST_CASE("a stored staging measurement reads back as it was written") {
  const std::size_t never = std::numeric_limits<std::size_t>::max();
  const std::size_t cases[][2] = {{1u << 20, 4u << 20}, {never, 16u << 20}, {never, never}, {0, 999999999999999}};
  for (const auto& c : cases)
    for (bool pieces : {false, true}) {
      std::size_t back[2] = {1, 1};
      bool p = !pieces;
      REQUIRE(parse_measurement(format_measurement(c, pieces), back, p));
      CHECK(back[0] == c[0]);
      CHECK(back[1] == c[1]);
      CHECK(p == pieces);
    }
}

TEST_CASE("a malformed stored staging measurement is refused whole") {
  const std::size_t c[2] = {1u << 20, 4u << 20};
  const std::string good = format_measurement(c, true);
  const std::string bad[] = {
      "",
      "gpurt transfer measurement 2\nupload_cutover 1\ndownload_cutover 1\ndownload_pieces 1\n",
      good.substr(0, good.size() - 1),                                   // no final newline
      good + "extra 1\n",                                                 // trailing line
      "gpurt transfer measurement 1\nupload_cutover -1\ndownload_cutover 1\ndownload_pieces 1\n",
      "gpurt transfer measurement 1\nupload_cutover 1x\ndownload_cutover 1\ndownload_pieces 1\n",
      "gpurt transfer measurement 1\nupload_cutover 99999999999999999999\ndownload_cutover 1\ndownload_pieces 1\n",
      "gpurt transfer measurement 1\nupload_cutover \ndownload_cutover 1\ndownload_pieces 1\n",
      "gpurt transfer measurement 1\nupload_cutover 1\ndownload_cutover 1\ndownload_pieces 2\n",
      "gpurt transfer measurement 1\ndownload_cutover 1\nupload_cutover 1\ndownload_pieces 1\n",  // order
      "gpurt transfer measurement 1\nupload_cutover 1\ndownload_cutover never\ndownload_pieces 1",
      std::string("gpurt transfer measurement 1\nupload_cutover 1\0\ndownload_cutover 1\ndownload_pieces 1\n", 84),  // a NUL inside a number
  };
  for (const std::string& text : bad) {
    INFO(text);
    std::size_t out[2] = {7, 7};
    bool p = false;
    CHECK_FALSE(parse_measurement(text, out, p));
    CHECK(out[0] == 7);  // nothing taken from a refused entry
    CHECK(out[1] == 7);
  }
}
