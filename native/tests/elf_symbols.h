// The dynamic symbols a shared library defines, with their symbol versions, read
// from the file (ELF64 little-endian): .dynsym, its string table, .gnu.version
// and .gnu.version_d. What `nm -D --defined-only --with-symbol-versions` prints,
// without the tool.
#pragma once

#include <elf.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace elfsyms {

struct Symbol {
  std::string version;  // "" when unversioned (VER_NDX_GLOBAL)
  bool is_default = true;  // name@@version (false: name@version, a hidden older one)
  bool function = false;
};

/// name -> symbol, for every defined global or weak symbol (a name defined in
/// several versions keeps its default one).
inline std::map<std::string, Symbol> defined_symbols(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string data = ss.str();
  auto at = [&](size_t off, size_t len) {
    if (off > data.size() || len > data.size() - off) throw std::runtime_error(path + ": truncated ELF");
    return data.data() + off;
  };
  Elf64_Ehdr eh;
  memcpy(&eh, at(0, sizeof eh), sizeof eh);
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB)
    throw std::runtime_error(path + ": not a little-endian ELF64 file");
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  for (size_t i = 0; i < sh.size(); ++i)
    memcpy(&sh[i], at(eh.e_shoff + i * eh.e_shentsize, sizeof(Elf64_Shdr)), sizeof(Elf64_Shdr));
  const Elf64_Shdr *dynsym = nullptr, *versym = nullptr, *verdef = nullptr;
  for (const auto& s : sh) {
    if (s.sh_type == SHT_DYNSYM) dynsym = &s;
    if (s.sh_type == SHT_GNU_versym) versym = &s;
    if (s.sh_type == SHT_GNU_verdef) verdef = &s;
  }
  if (!dynsym) throw std::runtime_error(path + ": no .dynsym");
  const Elf64_Shdr& strtab = sh.at(dynsym->sh_link);
  auto str = [&](size_t off) { return std::string(at(strtab.sh_offset + off, 1)); };

  std::map<uint16_t, std::string> version_names;  // verdef index -> name
  if (verdef) {
    size_t off = verdef->sh_offset;
    for (size_t n = 0; n < verdef->sh_info; ++n) {
      Elf64_Verdef vd;
      memcpy(&vd, at(off, sizeof vd), sizeof vd);
      Elf64_Verdaux aux;
      memcpy(&aux, at(off + vd.vd_aux, sizeof aux), sizeof aux);
      version_names[vd.vd_ndx] = str(aux.vda_name);
      if (!vd.vd_next) break;
      off += vd.vd_next;
    }
  }
  std::map<std::string, Symbol> out;
  const size_t count = dynsym->sh_size / sizeof(Elf64_Sym);
  for (size_t i = 1; i < count; ++i) {
    Elf64_Sym s;
    memcpy(&s, at(dynsym->sh_offset + i * sizeof s, sizeof s), sizeof s);
    const unsigned bind = ELF64_ST_BIND(s.st_info), type = ELF64_ST_TYPE(s.st_info);
    if (s.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) || s.st_name == 0) continue;
    Symbol sym;
    sym.function = type == STT_FUNC || type == STT_GNU_IFUNC;
    if (versym) {
      uint16_t v;
      memcpy(&v, at(versym->sh_offset + i * sizeof v, sizeof v), sizeof v);
      sym.is_default = !(v & 0x8000);
      const uint16_t ndx = v & 0x7fff;
      if (ndx > 1) sym.version = version_names.count(ndx) ? version_names[ndx] : "?";
    }
    const std::string name = str(s.st_name);
    if (type == STT_OBJECT && sym.version == name) continue;  // a version definition's own symbol
    auto it = out.find(name);
    if (it == out.end() || (sym.is_default && !it->second.is_default)) out[name] = sym;
  }
  return out;
}

/// The version definitions (name -> parent name, "" for none), in file order.
inline std::vector<std::pair<std::string, std::string>> version_chain(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string data = ss.str();
  auto at = [&](size_t off, size_t len) {
    if (off > data.size() || len > data.size() - off) throw std::runtime_error(path + ": truncated ELF");
    return data.data() + off;
  };
  Elf64_Ehdr eh;
  memcpy(&eh, at(0, sizeof eh), sizeof eh);
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  for (size_t i = 0; i < sh.size(); ++i)
    memcpy(&sh[i], at(eh.e_shoff + i * eh.e_shentsize, sizeof(Elf64_Shdr)), sizeof(Elf64_Shdr));
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : sh) {
    if (s.sh_type != SHT_GNU_verdef) continue;
    const Elf64_Shdr& strtab = sh.at(s.sh_link);
    auto str = [&](size_t off) { return std::string(at(strtab.sh_offset + off, 1)); };
    size_t off = s.sh_offset;
    for (size_t n = 0; n < s.sh_info; ++n) {
      Elf64_Verdef vd;
      memcpy(&vd, at(off, sizeof vd), sizeof vd);
      Elf64_Verdaux aux;
      memcpy(&aux, at(off + vd.vd_aux, sizeof aux), sizeof aux);
      std::string parent;
      if (vd.vd_cnt > 1) {
        Elf64_Verdaux p;
        memcpy(&p, at(off + vd.vd_aux + aux.vda_next, sizeof p), sizeof p);
        parent = str(p.vda_name);
      }
      if (!(vd.vd_flags & VER_FLG_BASE)) out.emplace_back(str(aux.vda_name), parent);
      if (!vd.vd_next) break;
      off += vd.vd_next;
    }
  }
  return out;
}

}  // namespace elfsyms
