table "countries" {
  column "code" {
    type = char(2)
  }
  column "name" {
    type = varchar(80)
  }
  column "rank" {
    type = int
    null = true
  }
  primary_key {
    columns = [column.code]
  }
  data {
    key = [column.code]
    rows = [{ code = "FR", name = "France", rank = 2 }]
  }
}
